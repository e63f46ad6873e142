import { ZkPlanError, named } from './base-error.js';

/**
 * A dependent task (`waitForPlan`, `zk-plan:wait-for-plan`) whose awaited plan failed or was
 * cancelled, whose schedule's run was skipped or could not be built, or whose schedule has no such
 * tick: it fails for good, at once (no try could succeed).
 *
 * @category Errors
 */
export class DependencyFailedError extends ZkPlanError {
  readonly code = 'DEPENDENCY_FAILED';
  override readonly charged = true;
  override readonly retryable = false;
  constructor(
    task: string,
    /** What happened to the awaited plan, as a sentence. */
    readonly reason: string,
  ) {
    super(
      `Task ${task} depends on another plan's run, which can no longer complete: ${reason}. Rerun or retry that plan, then this one (retryFailed)`,
      {
        path: task,
        cliMessage: `Task ${task} depends on another plan's run, which can no longer complete: ${reason}. Rerun or retry that plan (zk-plan retry <plan>), then this one`,
      },
    );
  }
}
named(DependencyFailedError, 'DependencyFailedError');
