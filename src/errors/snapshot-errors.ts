import { ZkPlanError, named } from './base-error.js';

/**
 * What stops an export, an import or a rerun (the contract: these codes are stable).
 *
 * @category Errors
 */
export type SnapshotProblem =
  /** Not a snapshot this version reads: `{ format: 'zk-plan-snapshot', version: 1, spec, params, tasks, … }`, or a task entry that is not one. */
  | 'SNAPSHOT_INVALID'
  /** A plan without a spec record whose tasks cannot be written as a spec (an inline task still to run, a malformed task node). */
  | 'SNAPSHOT_UNDERIVABLE'
  /** A finished task's result is needed (by a task still to run) and is no longer stored anywhere. */
  | 'SNAPSHOT_RESULT_MISSING'
  /** A cancelled plan's tasks are deleted: what they stood at is gone. */
  | 'SNAPSHOT_PLAN_CANCELLED'
  /** A plan some of whose tasks spawned tasks or handed over (ctx.spawn, ctx.continueWith): its graph grew while it ran, and a snapshot of it would make those tasks twice. */
  | 'SNAPSHOT_SPAWNED'
  /** `snapshots.rerun` of a plan without a spec record (built with addTask): there is no spec to run again. */
  | 'RERUN_NO_SPEC'
  /** `snapshots.rerun`'s `from` is not a task key of the plan's spec. */
  | 'RERUN_UNKNOWN_KEY'
  /** `snapshots.rerun(plan, { from: 'failed' })` of a plan with no failed task. */
  | 'RERUN_NOTHING_FAILED'
  /** `snapshots.rerun` from a key of a failFast plan with a failed task outside the rerun: the new run would stop at once. */
  | 'RERUN_BLOCKED_BY_FAILED';

/**
 * Export, import or rerun cannot go on; `key` names the task where there is one, `path` the plan. Nothing was written.
 *
 * @category Errors
 */
export class SnapshotError extends ZkPlanError {
  readonly code: SnapshotProblem;
  constructor(
    problem: SnapshotProblem,
    readonly key: string | undefined,
    message: string,
    path?: string,
    /** The message in the words of the `zk-plan` command, when `message` names API calls. */
    cliMessage?: string,
  ) {
    const task = key === undefined ? '' : `Task "${key}": `;
    super(`${task}${message}`, {
      path,
      ...(cliMessage === undefined ? {} : { cliMessage: `${task}${cliMessage}` }),
    });
    this.code = problem;
  }
}
named(SnapshotError, 'SnapshotError');
