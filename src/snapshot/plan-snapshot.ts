/**
 * A plan's snapshot (`exportPlan`): its spec and params, and where each task of the spec stood:
 * `done` (with its result when one is still stored), `failed` (with the failure), or `pending`
 * (waiting, runnable or running: it runs again after an import). Self-contained and
 * superjson-serialisable, so it moves between ensembles (`zk-plan export` / `zk-plan import`).
 */
import type { PlanOptions } from '../config/plan-options.js';
import { SnapshotError } from '../errors/snapshot-errors.js';
import type { TaskFailure } from '../store/failure-policy.js';
import type { PlanSpec } from '../spec/plan-spec.js';

export const SNAPSHOT_FORMAT = 'zk-plan-snapshot';
export const SNAPSHOT_VERSION = 1;

export type SnapshotTask =
  | { readonly state: 'done'; readonly result?: unknown; readonly hasResult: boolean }
  | { readonly state: 'failed'; readonly failure: TaskFailure }
  | { readonly state: 'pending'; readonly failures: number };

export interface PlanSnapshot {
  readonly format: typeof SNAPSHOT_FORMAT;
  readonly version: typeof SNAPSHOT_VERSION;
  readonly exportedAt: string;
  /** The plan it was taken of. */
  readonly plan: string;
  readonly spec: PlanSpec;
  readonly params: Readonly<Record<string, unknown>>;
  /** The plan's own options as stored (failure and retry policy, priority, history). */
  readonly options: PlanOptions;
  readonly tasks: Readonly<Record<string, SnapshotTask>>;
}

/** Checks the envelope and each task's entry against the spec's keys; SnapshotError (SNAPSHOT_INVALID) naming what is wrong. */
export function assertPlanSnapshot(value: unknown): asserts value is PlanSnapshot {
  const invalid = (message: string, key?: string): SnapshotError => new SnapshotError('SNAPSHOT_INVALID', key, message);
  if (typeof value !== 'object' || value === null) throw invalid('expected a snapshot object from exportPlan (zk-plan export)');
  const snapshot = value as Partial<PlanSnapshot>;
  if (snapshot.format !== SNAPSHOT_FORMAT || snapshot.version !== SNAPSHOT_VERSION)
    throw invalid(
      `expected format "${SNAPSHOT_FORMAT}" version ${SNAPSHOT_VERSION}, got ${JSON.stringify(snapshot.format)} version ${JSON.stringify(snapshot.version)}`,
    );
  if (typeof snapshot.spec !== 'object' || snapshot.spec === null || typeof snapshot.spec.tasks !== 'object') throw invalid('"spec" must be a plan spec');
  if (typeof snapshot.params !== 'object' || snapshot.params === null) throw invalid('"params" must be an object');
  if (typeof snapshot.options !== 'object' || snapshot.options === null) throw invalid('"options" must be an object');
  if (typeof snapshot.tasks !== 'object' || snapshot.tasks === null) throw invalid('"tasks" must be an object of task states by key');
  const keys = Object.keys(snapshot.spec.tasks);
  for (const key of keys) {
    const task = (snapshot.tasks as Record<string, Partial<SnapshotTask> | undefined>)[key];
    if (task === undefined) throw invalid('has no state in the snapshot', key);
    if (task.state === 'done' && typeof (task as { hasResult?: unknown }).hasResult === 'boolean') continue;
    if (task.state === 'failed' && typeof (task as { failure?: unknown }).failure === 'object') continue;
    if (task.state === 'pending' && typeof (task as { failures?: unknown }).failures === 'number') continue;
    throw invalid(`expected { state: 'done', hasResult, result? }, { state: 'failed', failure } or { state: 'pending', failures }`, key);
  }
  for (const key of Object.keys(snapshot.tasks)) if (!keys.includes(key)) throw invalid("is not a task of the snapshot's spec", key);
}
