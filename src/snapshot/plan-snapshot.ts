/**
 * A plan's snapshot (`snapshots.export`): its spec and params, and where each task of the spec stood:
 * done (with its result, when one is still stored), failed (with the failure), or unfinished
 * (waiting, runnable, retrying or running: it runs after an import). Self-contained and
 * superjson-serialisable, so it moves between ensembles (`zk-plan export` / `zk-plan import`), and
 * checked in full by `assertPlanSnapshot` before an import writes anything.
 */
import type { PlanOptions } from '../config/plan-options.js';
import { SnapshotError } from '../errors/snapshot-errors.js';
import type { TaskFailure } from '../store/failure-policy.js';
import type { PlanSpec } from '../spec/plan-spec.js';

/**
 * The `format` field of every snapshot, so that a file can be told apart from other JSON.
 *
 * @category Snapshots
 */
export const SNAPSHOT_FORMAT = 'zk-plan-snapshot';
/**
 * The snapshot format's version that `exportPlan` writes and `importPlan` reads.
 *
 * @category Snapshots
 */
export const SNAPSHOT_VERSION = 1;

/**
 * The function name of a derived spec's done task whose definition is gone (a plan without
 * history): it is never called, since done tasks are not run again.
 *
 * @category Snapshots
 */
export const UNKNOWN_FUNCTION = 'zk-plan:unknown';

/**
 * Where a done task's result was found: its own `result` node (finished, not yet deleted), its kept result (`result-N`), or the input it gave a task still to run.
 *
 * @category Snapshots
 */
export type ResultSource = 'task' | 'kept' | 'input';

/**
 * A task that has not finished: each of them runs after an import.
 *
 * @category Snapshots
 */
export type UnfinishedState = 'waiting' | 'runnable' | 'retrying' | 'running';

const UNFINISHED_STATES: readonly string[] = [
  'waiting',
  'runnable',
  'retrying',
  'running',
] satisfies readonly UnfinishedState[];
const RESULT_SOURCES: readonly string[] = [
  'task',
  'kept',
  'input',
] satisfies readonly ResultSource[];

/**
 * Where one task stood. `failedTries`: failed tries so far (unfinished), in all (failed), or before the try that succeeded (done, when the plan kept history).
 *
 * @category Snapshots
 */
export type SnapshotTask =
  | {
      readonly state: 'done';
      readonly hasResult: true;
      readonly result: unknown;
      readonly resultFrom: ResultSource;
      readonly failedTries?: number;
    }
  | { readonly state: 'done'; readonly hasResult: false; readonly failedTries?: number }
  | { readonly state: 'failed'; readonly failure: TaskFailure; readonly failedTries: number }
  | { readonly state: UnfinishedState; readonly failedTries: number; readonly lastError?: string };

/**
 * A plan as `exportPlan` takes it and `importPlan` recreates it: its spec (recorded, or derived
 * from its tasks), params, options, and each task's state with its result or failure.
 * Self-contained and superjson-serialisable, so it can be stored as a file and imported into
 * another ensemble.
 *
 * @category Snapshots
 */
export interface PlanSnapshot {
  readonly format: typeof SNAPSHOT_FORMAT;
  readonly version: typeof SNAPSHOT_VERSION;
  /** When it was taken (ISO-8601). */
  readonly exportedAt: string;
  /** The plan it was taken of. */
  readonly plan: string;
  /** `spec-record`: the spec the plan was submitted with; `task-graph`: derived from its task nodes, keyed by task name (a plan built with addTask). */
  readonly source: 'spec-record' | 'task-graph';
  readonly spec: PlanSpec;
  readonly params: Readonly<Record<string, unknown>>;
  /** The plan's options (failure and retry policy, priority, history): the spec's. */
  readonly options: PlanOptions;
  /** By the spec's keys. */
  readonly tasks: Readonly<Record<string, SnapshotTask>>;
  /** What a derived spec could not recover, one sentence each (`task-graph` only). */
  readonly gaps?: readonly string[];
}

/** A snapshot's body: what is read of the plan (from its spec record, or derived from its tasks). */
export type SnapshotBody = Pick<
  PlanSnapshot,
  'source' | 'spec' | 'params' | 'options' | 'tasks' | 'gaps'
>;

/**
 * Checks the envelope and every task entry against the spec's keys; SnapshotError (SNAPSHOT_INVALID) naming the task or field.
 *
 * @category Snapshots
 */
export function assertPlanSnapshot(value: unknown): asserts value is PlanSnapshot {
  if (!isRecord(value))
    throw invalid(
      'expected a snapshot object from exportPlan (zk-plan export)',
      undefined,
      'expected a snapshot object, as zk-plan export writes it',
    );
  if (value['format'] !== SNAPSHOT_FORMAT)
    throw invalid(`expected format "${SNAPSHOT_FORMAT}", got ${JSON.stringify(value['format'])}`);
  if (value['version'] !== SNAPSHOT_VERSION) {
    const newer =
      typeof value['version'] === 'number' && value['version'] > SNAPSHOT_VERSION
        ? ' (written by a newer zk-plan)'
        : '';
    throw invalid(
      `expected version ${SNAPSHOT_VERSION}, got ${JSON.stringify(value['version'])}${newer}`,
    );
  }
  if (typeof value['exportedAt'] !== 'string' || Number.isNaN(Date.parse(value['exportedAt'])))
    throw invalid('"exportedAt" must be an ISO-8601 time');
  if (typeof value['plan'] !== 'string' || !value['plan'].startsWith('/'))
    throw invalid('"plan" must be the path of the plan it was taken of');
  if (value['source'] !== 'spec-record' && value['source'] !== 'task-graph')
    throw invalid('"source" must be "spec-record" or "task-graph"');
  const spec = value['spec'];
  if (!isRecord(spec) || !isRecord(spec['tasks']))
    throw invalid('"spec" must be a plan spec { tasks, options? }');
  if (!isRecord(value['params'])) throw invalid('"params" must be an object of named values');
  if (!isRecord(value['options'])) throw invalid('"options" must be an object of plan options');
  const tasks = value['tasks'];
  if (!isRecord(tasks)) throw invalid('"tasks" must be an object of task states by key');
  if (
    value['gaps'] !== undefined &&
    (!Array.isArray(value['gaps']) || value['gaps'].some((gap) => typeof gap !== 'string'))
  )
    throw invalid('"gaps" must be a list of sentences');
  const keys = Object.keys(spec['tasks']);
  for (const key of keys) assertSnapshotTask(key, tasks[key]);
  for (const key of Object.keys(tasks))
    if (!keys.includes(key)) throw invalid("is not a task of the snapshot's spec", key);
}

function assertSnapshotTask(key: string, task: unknown): void {
  if (task === undefined) throw invalid('has no state in the snapshot', key);
  if (!isRecord(task)) throw invalid('expected { state, … }', key);
  const { state } = task;
  if (task['failedTries'] !== undefined || state !== 'done')
    assertCount(key, 'failedTries', task['failedTries']);
  if (state === 'done') {
    if (typeof task['hasResult'] !== 'boolean')
      throw invalid('a done task needs "hasResult" (true or false)', key);
    if (task['hasResult'] && !('result' in task))
      throw invalid('"hasResult" is true but there is no "result"', key);
    if (task['hasResult'] && !RESULT_SOURCES.includes(task['resultFrom'] as string))
      throw invalid(`"resultFrom" must be one of ${RESULT_SOURCES.join(', ')}`, key);
    return;
  }
  if (state === 'failed') {
    const failure = task['failure'];
    if (
      !isRecord(failure) ||
      typeof failure['message'] !== 'string' ||
      typeof failure['type'] !== 'string' ||
      typeof failure['code'] !== 'string'
    )
      throw invalid('a failed task needs "failure" { type, message, code, attempts, at, … }', key);
    if (!(failure['at'] instanceof Date) || Number.isNaN(failure['at'].getTime()))
      throw invalid('"failure.at" must be a Date (superjson keeps it one)', key);
    assertCount(key, 'failure.attempts', failure['attempts']);
    return;
  }
  if (!UNFINISHED_STATES.includes(state as string))
    throw invalid(
      `unknown state ${JSON.stringify(state)} (expected done, failed, ${UNFINISHED_STATES.join(', ')})`,
      key,
    );
  if (task['lastError'] !== undefined && typeof task['lastError'] !== 'string')
    throw invalid('"lastError" must be a string', key);
}

function assertCount(key: string, field: string, value: unknown): void {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0)
    throw invalid(`"${field}" must be a whole number ≥ 0, got ${JSON.stringify(value)}`, key);
}

function invalid(message: string, key?: string, cliMessage?: string): SnapshotError {
  return new SnapshotError('SNAPSHOT_INVALID', key, message, undefined, cliMessage);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
