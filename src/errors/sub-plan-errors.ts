import { ZkPlanError, named } from './base-error.js';

/**
 * A sub-plan task (`subPlan`, `zk-plan:sub-plan`) whose child plan failed, was cancelled or was
 * deleted, or which cannot make its child (an invalid definition or child spec, a schedule that does
 * not exist, a path another plan holds): it fails for good, at once (no try of its own could
 * succeed).
 *
 * @category Errors
 */
export class SubPlanFailedError extends ZkPlanError {
  readonly code = 'SUB_PLAN_FAILED';
  override readonly charged = true;
  override readonly retryable = false;
  constructor(
    task: string,
    /** What went wrong, as a sentence. */
    readonly reason: string,
    /** The child plan, when the task got as far as naming it. */
    readonly child?: string,
  ) {
    super(
      `Sub-plan task ${task} cannot complete: ${reason}. Fix the cause, then retryFailed on this task's plan (it retries the child's failed tasks too); a child that is gone or cancelled needs a rerun of the plan from this task (snapshots.rerun), which makes a new one`,
      {
        path: task,
        cliMessage: `Sub-plan task ${task} cannot complete: ${reason}. Fix the cause, then zk-plan retry <plan> (it retries the child's failed tasks too); a child that is gone or cancelled needs zk-plan rerun <plan> --from <this task's key>, which makes a new one`,
      },
    );
  }
}
named(SubPlanFailedError, 'SubPlanFailedError');
