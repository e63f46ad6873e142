/**
 * `exportPlan`: a plan built from a spec, read into a snapshot. Each task of the spec record is
 * `failed` (its `failed` node), `done` (its node is gone, or holds its result), or `pending`. A
 * done task's result comes from where it is still stored: the task's own `result` (finished, not
 * yet deleted), its kept result (`result-N`, which submitted plans keep for every task), or the
 * input it gave a task still to run (that task's `arg-N`, at the position of the key in its inputs).
 * Reads only; a plan that changes meanwhile gives a snapshot of some moment of each task.
 */
import { parseControlRecord } from '../control/control-record.js';
import { PlanNotFoundError } from '../errors/plan-errors.js';
import { SnapshotError } from '../errors/snapshot-errors.js';
import { decodeValue } from '../serialization/codec.js';
import type { TaskFailure } from '../store/failure-policy.js';
import type { TaskStore } from '../store/task-store.js';
import { readSpecRecord, type SpecRecord } from '../spec/spec-record.js';
import { readValue } from '../zk/chunked-value.js';
import { ARG_PREFIX, CONTROL, DEP_PREFIX, FAILED, RESULT, assertValidPath, childPath, keptResultPathFor, serialOf } from '../zk/layout.js';
import type { Zk } from '../zk/zk.js';
import { SNAPSHOT_FORMAT, SNAPSHOT_VERSION, type PlanSnapshot, type SnapshotTask } from './plan-snapshot.js';

export async function exportPlan(zk: Zk, store: TaskStore, plan: string): Promise<PlanSnapshot> {
  assertValidPath('plan', plan);
  if ((await zk.exists(plan)) === undefined) throw new PlanNotFoundError(plan);
  const record = await readSpecRecord(zk, plan);
  if (record === undefined)
    throw new SnapshotError(
      'SNAPSHOT_NO_SPEC',
      undefined,
      `plan ${plan} has no spec record: only plans built by submitPlan or a schedule can be exported`,
      plan,
    );
  const control = await zk.tryGetData(childPath(plan, CONTROL));
  if (control !== undefined && parseControlRecord(childPath(plan, CONTROL), control.data).state === 'cancelled')
    throw new SnapshotError('SNAPSHOT_PLAN_CANCELLED', undefined, `plan ${plan} was cancelled: its tasks are deleted`, plan);
  const tasks: Record<string, SnapshotTask> = {};
  const live = new Map<string, string[]>();
  await Promise.all(
    Object.entries(record.tasks).map(async ([key, task]) => {
      const listing = await store.inspectTask(task);
      if (listing !== undefined && listing.children.length > 0) live.set(key, listing.children);
      tasks[key] = await taskState(zk, store, task, listing?.children);
    }),
  );
  // Keys an import or rerun did not recreate were done before it.
  for (const key of Object.keys(record.spec.tasks)) tasks[key] ??= { state: 'done', hasResult: false };
  // A done task whose result is stored nowhere else may still be an input a pending task holds.
  await Promise.all(
    Object.entries(tasks).map(async ([key, state]) => {
      if (state.state !== 'done' || state.hasResult) return;
      const held = await heldInput(zk, record, live, key);
      if (held !== undefined) tasks[key] = { state: 'done', hasResult: true, result: held.value };
    }),
  );
  return {
    format: SNAPSHOT_FORMAT,
    version: SNAPSHOT_VERSION,
    exportedAt: new Date().toISOString(),
    plan,
    spec: record.spec,
    params: record.params,
    options: record.spec.options ?? {},
    tasks,
  };
}

async function taskState(zk: Zk, store: TaskStore, task: string, children: readonly string[] | undefined): Promise<SnapshotTask> {
  if (children === undefined || children.length === 0) {
    const kept = await readValue(zk, keptResultPathFor(task));
    return kept === undefined ? { state: 'done', hasResult: false } : { state: 'done', hasResult: true, result: decodeValue(keptResultPathFor(task), kept) };
  }
  if (children.includes(FAILED)) {
    const path = childPath(task, FAILED);
    return { state: 'failed', failure: decodeValue(path, await readValue(zk, path)) as TaskFailure };
  }
  if (children.includes(RESULT)) {
    const stored = await store.readEncodedResult(task);
    if (stored !== undefined) return { state: 'done', hasResult: true, result: decodeValue(childPath(task, RESULT), stored) };
  }
  return { state: 'pending', failures: (await store.readAttempts(task))?.failures ?? 0 };
}

/** `key`'s result as a pending dependent holds it: the arg at the position of `key` among that dependent's inputs. */
async function heldInput(zk: Zk, record: SpecRecord, live: ReadonlyMap<string, readonly string[]>, key: string): Promise<{ value: unknown } | undefined> {
  for (const [dependent, children] of live) {
    const inputs = record.spec.tasks[dependent]?.inputs ?? [];
    // dep-N and arg-N share serials in input order: the i-th of them, by serial, is input i.
    const slots = children
      .map((name) => ({ name, serial: serialOf(name, DEP_PREFIX) ?? serialOf(name, ARG_PREFIX) }))
      .filter((slot): slot is { name: string; serial: string } => slot.serial !== undefined)
      .sort((a, b) => Number(a.serial) - Number(b.serial));
    for (const [position, input] of inputs.entries()) {
      const slot = slots[position];
      if (input !== key || slot === undefined || !slot.name.startsWith(ARG_PREFIX)) continue;
      const path = childPath(record.tasks[dependent] as string, slot.name);
      const value = await readValue(zk, path);
      if (value !== undefined) return { value: decodeValue(path, value) };
    }
  }
  return undefined;
}
