/**
 * `snapshots.export`: a plan read into a snapshot. A plan built from a spec (submitPlan, a schedule, an
 * import, a rerun) is exported with the spec of its record; any other plan (built with addTask)
 * with a spec derived from its task nodes (derive-spec.ts). Each task's standing and stored result
 * comes from task-standing.ts. Reads only: a plan that changes meanwhile gives a snapshot of some
 * moment of each task.
 */
import { parseControlRecord } from '../control/control-record.js';
import { PlanNotFoundError } from '../errors/plan-errors.js';
import { SnapshotError } from '../errors/snapshot-errors.js';
import type { DoneRecord } from '../store/task-history.js';
import type { TaskStore } from '../store/task-store.js';
import { readSpecRecord, type SpecRecord } from '../spec/spec-record.js';
import {
  ARG_PREFIX,
  CONTROL,
  HISTORY,
  SPAWNED,
  assertValidPath,
  childPath,
  inputSlotSerials,
} from '../zk/layout.js';
import type { Zk } from '../zk/zk.js';
import { deriveSnapshot } from './derive-spec.js';
import {
  SNAPSHOT_FORMAT,
  SNAPSHOT_VERSION,
  type PlanSnapshot,
  type SnapshotBody,
  type SnapshotTask,
} from './plan-snapshot.js';
import {
  readComplete,
  readHistory,
  readTaskStanding,
  resultFromOutputs,
  withHeldResult,
} from './task-standing.js';

export async function exportPlan(zk: Zk, store: TaskStore, plan: string): Promise<PlanSnapshot> {
  assertValidPath('plan', plan);
  const listing = await exportable(zk, plan);
  const history = listing.children.includes(HISTORY)
    ? await readHistory(store.reads, plan)
    : new Map<string, DoneRecord>();
  const record = await readSpecRecord(zk, plan);
  const body =
    record === undefined
      ? await deriveSnapshot(zk, store, plan, listing.children, history)
      : await fromSpecRecord(zk, store, record, history);
  // Read again after the tasks: a cancel or delete meanwhile removed tasks that would now look done.
  await exportable(zk, plan);
  return {
    format: SNAPSHOT_FORMAT,
    version: SNAPSHOT_VERSION,
    exportedAt: new Date().toISOString(),
    plan,
    ...body,
  };
}

/** The plan's children, if it exists and was not cancelled. */
async function exportable(zk: Zk, plan: string): Promise<{ readonly children: readonly string[] }> {
  const listing = await zk.tryGetChildren(plan);
  if (listing === undefined) throw new PlanNotFoundError(plan);
  if (listing.children.includes(SPAWNED))
    throw new SnapshotError(
      'SNAPSHOT_SPAWNED',
      undefined,
      `plan ${plan} grew while it ran (some of its tasks spawned tasks or handed over with ctx.spawn or ctx.continueWith): a snapshot would make those tasks once from the snapshot and again when their spawners ran. Submit its spec again (submitPlan) to run it anew`,
      plan,
      `plan ${plan} grew while it ran (some of its tasks spawned tasks or handed over): a snapshot would make those tasks once from the snapshot and again when their spawners ran. Submit its spec again (zk-plan submit) to run it anew`,
    );
  if (listing.children.includes(CONTROL)) {
    const control = await zk.tryGetData(childPath(plan, CONTROL));
    // A cancel deletes the plan's tasks: what they stood at is gone, and they would all look done.
    if (
      control !== undefined &&
      parseControlRecord(childPath(plan, CONTROL), control.data).state === 'cancelled'
    )
      throw new SnapshotError(
        'SNAPSHOT_PLAN_CANCELLED',
        undefined,
        `plan ${plan} was cancelled: its tasks are deleted, so where they stood is gone`,
        plan,
      );
  }
  return listing;
}

async function fromSpecRecord(
  zk: Zk,
  store: TaskStore,
  record: SpecRecord,
  history: ReadonlyMap<string, DoneRecord>,
): Promise<SnapshotBody> {
  const keys = Object.keys(record.spec.tasks);
  const read = await Promise.all(
    keys.map(async (key) => {
      const task = record.tasks[key];
      // A key an import or rerun did not recreate was done before it (nobody needed its result, and it had none to keep).
      if (task === undefined)
        return { key, standing: { state: 'done', hasResult: false } as SnapshotTask };
      return {
        key,
        standing: (await readTaskStanding(zk, store, task, history.get(task))).standing,
      };
    }),
  );
  const tasks = Object.fromEntries(read.map(({ key, standing }) => [key, standing]));
  // A done task whose result is stored nowhere else may still be an input that a task to run holds.
  await Promise.all(
    Object.entries(tasks).map(async ([key, standing]) => {
      if (standing.state !== 'done' || standing.hasResult) return;
      const path = record.tasks[key];
      const outputs = path === undefined ? undefined : history.get(path);
      const held =
        (outputs && (await resultFromOutputs(store.reads, outputs))) ??
        (await heldInput(zk, store, record, key));
      if (held !== undefined) tasks[key] = withHeldResult(standing, held.value);
    }),
  );
  return {
    source: 'spec-record',
    spec: record.spec,
    params: record.params,
    options: record.spec.options ?? {},
    tasks,
  };
}

/**
 * `key`'s result as a dependent holds it: the arg at the position of `key` among that dependent's
 * inputs. dep-N and arg-N share serials in input order, so the i-th of them by serial is input i,
 * but only while every slot is there: a dependent deleting its args (it finished) is passed over.
 * Listed afresh, after `key` was found done: it hands its result on before its deletion begins.
 */
async function heldInput(
  zk: Zk,
  store: TaskStore,
  record: SpecRecord,
  key: string,
): Promise<{ value: unknown } | undefined> {
  for (const [dependent, entry] of Object.entries(record.spec.tasks)) {
    const inputs = entry.inputs ?? [];
    const path = record.tasks[dependent];
    if (path === undefined || !inputs.includes(key)) continue;
    const listing = await zk.tryGetChildren(path);
    const serials = inputSlotSerials(listing?.children ?? []);
    if (serials.length !== inputs.length) continue;
    for (const [position, input] of inputs.entries()) {
      if (input !== key) continue;
      const held = await readComplete(
        store.reads,
        childPath(path, `${ARG_PREFIX}${serials[position] as string}`),
      );
      if (held !== undefined) return held;
    }
  }
  return undefined;
}
