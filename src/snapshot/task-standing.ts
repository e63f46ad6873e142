/**
 * Where one task of a plan stands, read from its nodes for a snapshot (reads only), and where a
 * finished task's result can still be found: the task's own `result` (finished, not yet
 * deleted), its kept result (`result-N`), or an input it gave a task still to run (`arg-N`, found
 * through its history record's outputs or its place among the dependent's inputs).
 */
import { IncompleteValueError } from '../errors/value-errors.js';
import { decodeValue } from '../serialization/codec.js';
import type { TaskFailure } from '../store/failure-policy.js';
import type { DoneRecord } from '../store/task-history.js';
import { classifyTask } from '../store/task-state.js';
import type { TaskReader } from '../store/task-reader.js';
import type { TaskStore } from '../store/task-store.js';
import {
  ATTEMPTS,
  FAILED,
  OWNER,
  READY,
  RESULT,
  argPathForDep,
  childPath,
  keptResultPathFor,
} from '../zk/layout.js';
import type { Zk } from '../zk/zk.js';
import { readDecoded } from '../plan/plan-reader.js';
import type { SnapshotTask } from './plan-snapshot.js';

/** A task's standing and, while its node exists, its children (the inputs it holds are read from them). */
export interface TaskStanding {
  readonly standing: SnapshotTask;
  readonly children: readonly string[] | undefined;
}

/**
 * Reads one task. A task with a history record, or whose node is gone (or only the remains of its
 * deletion), is done; one with `failed` failed; one with a kept result, a complete `result` (a
 * worker is handing it on) or whose deletion has begun is done; the rest are unfinished: running (owned), waiting (inputs missing, or not ready
 * yet), retrying (a failed try's delay is not over) or runnable.
 */
export async function readTaskStanding(
  zk: Zk,
  store: TaskStore,
  task: string,
  history: DoneRecord | undefined,
): Promise<TaskStanding> {
  const listing = await store.reads.inspectTask(task);
  const state =
    listing === undefined ? 'gone' : classifyTask(listing.children, listing.childVersion);
  const children = listing?.children;
  if (history !== undefined || state === 'gone' || state === 'abandoned')
    return { standing: await finished(store.reads, task, history?.failedTries), children };
  if (state === 'failed') {
    const failure = (await readDecoded(zk, childPath(task, FAILED))) as TaskFailure;
    return { standing: { state: 'failed', failure, failedTries: failure.attempts }, children };
  }
  // Its function succeeded once a kept result exists, even if the node still looks owned (its deletion has begun).
  const kept = await readComplete(store.reads, keptResultPathFor(task));
  if (kept !== undefined)
    return {
      standing: { state: 'done', hasResult: true, result: kept.value, resultFrom: 'kept' },
      children,
    };
  if (children?.includes(RESULT)) {
    const result = await readComplete(store.reads, childPath(task, RESULT));
    if (result !== undefined)
      return {
        standing: { state: 'done', hasResult: true, result: result.value, resultFrom: 'task' },
        children,
      };
    // Unreadable: a write that stopped half-way (it runs again), or gone with the deletion that follows a hand-on.
    const now = await store.reads.inspectTask(task);
    if (now === undefined || !now.children.includes(READY))
      return { standing: { state: 'done', hasResult: false }, children };
  }
  if (isBeingDeleted(children ?? []))
    return { standing: { state: 'done', hasResult: false }, children };
  const attempts = children?.includes(ATTEMPTS) ? await store.reads.readAttempts(task) : undefined;
  const tried = {
    failedTries: attempts?.failures ?? 0,
    ...(attempts !== undefined ? { lastError: attempts.lastFailure.message } : {}),
  };
  if (state === 'owned') return { standing: { state: 'running', ...tried }, children };
  if (state === 'runnable' || state === 'finishable') {
    const retrying = attempts !== undefined && attempts.notBefore.getTime() > Date.now();
    return { standing: { state: retrying ? 'retrying' : 'runnable', ...tried }, children };
  }
  return { standing: { state: 'waiting', ...tried }, children }; // inputs missing, or not ready yet
}

/**
 * A finished task whose deletion has begun: `ready` is gone (a deletion removes it before `result`
 * and `owner`) while `owner` or `result` is left. Only a finished task's deletion does that in a
 * plan that is neither cancelled nor deleted (snapshots.export checks both after reading the tasks).
 */
function isBeingDeleted(children: readonly string[]): boolean {
  return !children.includes(READY) && (children.includes(OWNER) || children.includes(RESULT));
}

/** A done task with its kept result, when it has one. */
async function finished(
  store: TaskReader,
  task: string,
  failedTries: number | undefined,
): Promise<SnapshotTask> {
  const tries = failedTries === undefined ? {} : { failedTries };
  const kept = await readComplete(store, keptResultPathFor(task));
  return kept === undefined
    ? { state: 'done', hasResult: false, ...tries }
    : { state: 'done', hasResult: true, result: kept.value, resultFrom: 'kept', ...tries };
}

/** The done task with `value` as its result, found as an input a dependent holds. */
export function withHeldResult(task: SnapshotTask, value: unknown): SnapshotTask {
  const tries = task.failedTries === undefined ? {} : { failedTries: task.failedTries };
  return { state: 'done', hasResult: true, result: value, resultFrom: 'input', ...tries };
}

/** A finished task's result from the inputs it gave (its history record's outputs), where a dependent still holds one. */
export async function resultFromOutputs(
  store: TaskReader,
  record: DoneRecord,
): Promise<{ value: unknown } | undefined> {
  for (const dep of record.outputs) {
    const held = await readComplete(store, argPathForDep(dep));
    if (held !== undefined) return held;
  }
  return undefined;
}

/**
 * The decoded value at `path`; undefined when it is absent or its write (or deletion) stopped
 * half-way. Read with the store's limit: a forged or oversized value is MalformedNodeError.
 */
export async function readComplete(
  store: TaskReader,
  path: string,
): Promise<{ value: unknown } | undefined> {
  try {
    const data = await store.readStoredValue(path);
    return data === undefined ? undefined : { value: decodeValue(path, data) };
  } catch (error) {
    if (error instanceof IncompleteValueError) return undefined;
    throw error;
  }
}

/**
 * The plan's done records by task path (a plan that keeps a history). A record of another kind
 * belongs to a cancelled plan, which is not exported.
 */
export async function readHistory(
  store: TaskReader,
  plan: string,
): Promise<Map<string, DoneRecord>> {
  const records = await store.readHistory(plan);
  return new Map(
    [...records].flatMap(([task, record]) =>
      record.state === 'done' ? [[task, record] as const] : [],
    ),
  );
}
