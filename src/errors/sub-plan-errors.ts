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
      `Sub-plan task ${task} cannot complete: ${reason}. Fix the cause, then retryFailed on this task's plan (which retries the child's failed tasks too)`,
      {
        path: task,
        cliMessage: `Sub-plan task ${task} cannot complete: ${reason}. Fix the cause, then zk-plan retry <plan> on this task's plan (which retries the child's failed tasks too)`,
      },
    );
  }
}
named(SubPlanFailedError, 'SubPlanFailedError');
