/**
 * `snapshots.import`: a snapshot recreated as a new plan that goes on where the snapshot stood.
 *
 * - Unfinished tasks (waiting, runnable, retrying, running) run, with fresh tries.
 * - Failed tasks are recreated failed, with their failure (and the plan marked failed): they stay
 *   failed until `retryFailed`, which runs them and then their dependents.
 * - Done tasks are not run again. One that a task to run takes as an input, or whose result was
 *   kept, is recreated without inputs and with its result already stored: the first worker to take
 *   it hands that result on (and keeps it) through the normal completion, without calling the
 *   function. So the function of a done task need not exist where the snapshot is imported. Done
 *   tasks nobody needs and without a result are not recreated.
 *
 * Nothing is written before the snapshot and its spec are checked in full (SnapshotError,
 * PlanSpecError, naming the task). Then: the plan node (naming the snapshot, earlier-imports.ts),
 * one addTasks batch, the failed marker, the spec record, and `ready` last, so the plan runs
 * nothing before it is whole. A write that fails deletes the plan again; a crash part-way leaves an unready plan, which runs
 * nothing and is safe to delete; the import is safe to repeat: importing the same snapshot under
 * the same parent again deletes such a plan and imports afresh, and once an import finished,
 * returns its plan (`existing: true`) instead of making a second one. Two imports of one snapshot
 * running at the same moment are not guarded against (either may fail, or both may finish).
 */
import { SnapshotError } from '../errors/snapshot-errors.js';
import { call } from '../exec/task-spec.js';
import type { PlanWriter, TaskPreset } from '../plan/plan-writer.js';
import type { TaskToAdd } from '../config/task-options.js';
import type { WorkerInfo } from '../registry/worker-info.js';
import { encodeValue } from '../serialization/codec.js';
import { SHELL_FUNCTION } from '../shell/shell-params.js';
import type { CheckedSpec, TaskSpecEntry } from '../spec/plan-spec.js';
import { checkSpecForSubmit, type SpecRegistry, type SubmittedPlan } from '../spec/submit-plan.js';
import { writeSpecRecord } from '../spec/spec-record.js';
import type { TaskStore } from '../store/task-store.js';
import { assertValidPath } from '../zk/layout.js';
import type { Zk } from '../zk/zk.js';
import { IMPORT_MARK, findEarlierImports, snapshotIdentity } from './earlier-imports.js';
import { assertPlanSnapshot, type PlanSnapshot, type SnapshotTask } from './plan-snapshot.js';

/** What an import reads and writes with. */
export interface ImportContext {
  readonly zk: Zk;
  readonly writer: PlanWriter;
  readonly store: TaskStore;
  readonly functions: SpecRegistry;
  listWorkers(parent: string): Promise<WorkerInfo[]>;
}

/** Why a snapshot is imported: as it is, or as a rerun of its plan (which words its errors, and is recorded). */
export type ImportPurpose =
  { readonly kind: 'import' } | { readonly kind: 'rerun'; readonly from: string };

/**
 * What snapshots.import and snapshots.rerun made: the plan and each key's task path; `existing` when an earlier import of the snapshot had made it.
 *
 * @category Snapshots
 */
export interface ImportedPlan extends SubmittedPlan {
  readonly existing: boolean;
}

/** The plan to write, worked out before anything is written. */
interface ImportLayout {
  readonly checked: CheckedSpec;
  readonly order: readonly string[];
  readonly toAdd: readonly TaskToAdd[];
  readonly presets: ReadonlyMap<number, TaskPreset>;
  /** The first failed task and when it failed: the plan's `failed` marker. */
  readonly failed: { readonly key: string; readonly at: Date } | undefined;
}

export async function importSnapshot(
  context: ImportContext,
  parent: string,
  snapshot: unknown,
  purpose: ImportPurpose,
): Promise<ImportedPlan> {
  assertValidPath('parent', parent);
  assertPlanSnapshot(snapshot);
  const identity = snapshotIdentity(snapshot);
  const earlier = await findEarlierImports(context.zk, context.store, parent, identity);
  if (earlier.whole !== undefined) return { ...earlier.whole, existing: true };
  const layout = await layOut(context, parent, snapshot, purpose);
  // Plans an earlier import of this snapshot began and never readied have run nothing: removed, so that one plan remains.
  await Promise.all(earlier.cutShort.map((plan) => context.zk.deleteRecursive(plan)));

  const plan = await context.writer.createPlan(parent, layout.checked.options, {
    [IMPORT_MARK]: identity,
  });
  let tasks: Record<string, string>;
  try {
    const paths = await context.writer.addTasks(plan, layout.toAdd, {
      presets: layout.presets,
      specKeys: true,
    });
    tasks = Object.fromEntries(
      layout.order.map((key, position) => [key, paths[position] as string]),
    );
    if (layout.failed !== undefined)
      await context.store.markPlanFailed(
        plan,
        tasks[layout.failed.key] as string,
        layout.failed.at,
      );
    const continues = {
      plan: snapshot.plan,
      exportedAt: snapshot.exportedAt,
      snapshot: identity,
      ...(purpose.kind === 'rerun' ? { rerunFrom: purpose.from } : {}),
    };
    await writeSpecRecord(
      context.zk,
      plan,
      {
        spec: snapshot.spec,
        params: snapshot.params,
        tasks,
        submittedAt: new Date().toISOString(),
        continues,
      },
      {},
    );
  } catch (error) {
    // Not ready, so it ran nothing: removed where possible (a repeat of the import removes it otherwise).
    await context.zk.deleteRecursive(plan).catch(() => undefined);
    throw error;
  }
  await context.writer.markAsReady(plan);
  return { plan, tasks, existing: false };
}

/** Checks the spec (a done task's function need not exist: it is never called) and works out which tasks are recreated, and how. */
async function layOut(
  context: ImportContext,
  parent: string,
  snapshot: PlanSnapshot,
  purpose: ImportPurpose,
): Promise<ImportLayout> {
  const state = (key: string): SnapshotTask => snapshot.tasks[key] as SnapshotTask;
  // Entries are not checked yet (checkSpecForSubmit below does): a malformed one adds no name.
  const doneFunctions = Object.entries(snapshot.spec.tasks)
    .filter(([key]) => state(key).state === 'done')
    .map(([, entry]) => (entry as Partial<TaskSpecEntry> | null)?.fn)
    .filter((fn): fn is string => typeof fn === 'string');
  const registered = context.functions.names();
  const registry: SpecRegistry = {
    // An empty registry checks nothing: it stays empty.
    names: () => (registered.length === 0 ? [] : [...registered, ...doneFunctions]),
    schemasOf: (fn) => context.functions.schemasOf(fn),
  };
  // A done shell task is never run again either: it needs no worker that allows shell tasks.
  const doneShell = doneFunctions.includes(SHELL_FUNCTION);
  const workers = (await context.listWorkers(parent)).map((worker) => ({
    ...worker,
    functions:
      worker.functions.length === 0 ? worker.functions : [...worker.functions, ...doneFunctions],
    allowShell: worker.allowShell || doneShell,
  }));
  // An import (often into another ensemble, before its workers run) or a rerun is not refused for
  // functions nothing vouches for yet; ones a registry or the live workers lack still are.
  const checked = await checkSpecForSubmit(snapshot.spec, registry, workers, {
    params: snapshot.params,
    allowUnknownFunctions: true,
  });
  const entry = (key: string): NonNullable<ReturnType<CheckedSpec['tasks']['get']>> =>
    checked.tasks.get(key) as NonNullable<ReturnType<CheckedSpec['tasks']['get']>>;

  const created = new Set(checked.order.filter((key) => state(key).state !== 'done'));
  for (const key of checked.order) {
    const task = state(key);
    if (task.state !== 'done') continue;
    const neededBy = [...created].find((user) => entry(user).inputs.includes(key));
    if (neededBy !== undefined && !task.hasResult)
      throw resultMissing(snapshot, purpose, key, neededBy);
    if (neededBy !== undefined || (task.hasResult && entry(key).options.keepResult !== false))
      created.add(key);
  }
  const order = checked.order.filter((key) => created.has(key));
  const index = new Map(order.map((key, position) => [key, position]));
  const presets = new Map<number, TaskPreset>();
  const toAdd: TaskToAdd[] = order.map((key, position) => {
    const { fn, params, inputs, options } = entry(key);
    const task = state(key);
    if (task.state === 'done' && task.hasResult) {
      presets.set(position, {
        result: encodeValue(
          task.result,
          `the result of task "${key}"`,
          undefined,
          Number.MAX_SAFE_INTEGER,
        ),
      });
      return {
        task: call(fn, ...params),
        args: [],
        options: { ...options, keepResult: true, key },
      };
    }
    if (task.state === 'failed')
      presets.set(position, { failure: encodeValue(task.failure, `the failure of task "${key}"`) });
    // Results are kept unless the spec says otherwise, as submitPlan does: the plan can be exported and rerun in turn.
    return {
      task: call(fn, ...params),
      args: inputs.map((input) => index.get(input) as number),
      options: { keepResult: true, ...options, key },
    };
  });
  const firstFailed = order.find((key) => state(key).state === 'failed');
  const failed =
    firstFailed === undefined
      ? undefined
      : {
          key: firstFailed,
          at: (state(firstFailed) as Extract<SnapshotTask, { state: 'failed' }>).failure.at,
        };
  return { checked, order, toAdd, presets, failed };
}

/** A done task without a stored result that a task to run needs: what to do depends on how the snapshot came. */
function resultMissing(
  snapshot: PlanSnapshot,
  purpose: ImportPurpose,
  key: string,
  neededBy: string,
): SnapshotError {
  const message =
    purpose.kind === 'rerun'
      ? `is done, but its result is no longer stored (its options say keepResult: false, or it was deleted), and "${neededBy}", which runs again, needs it: rerun from "${key}" instead, which runs it again too`
      : `is done, but the snapshot holds no result for it, and "${neededBy}" still needs it as an input: export the plan again while the result is stored, or set this task to { state: 'runnable', failedTries: 0 } in the snapshot so that it runs again`;
  return new SnapshotError('SNAPSHOT_RESULT_MISSING', key, message, snapshot.plan);
}
