import { ZkPlanError, named } from './base-error.js';
import type { InputFailure } from '../trigger/task-outcome.js';

/**
 * A task under the default trigger rule (`allSucceeded`) was handed an input's failure: only a task
 * whose rule takes failures (`allDone`, `anySucceeded`, `oneFailed`) is ever handed one, so the
 * input node was written by hand. It fails for good, at once.
 *
 * @category Errors
 */
export class InputFailedError extends ZkPlanError {
  readonly code = 'INPUT_FAILED';
  override readonly charged = true;
  override readonly retryable = false;
  constructor(
    task: string,
    key: string | undefined,
    /** The failure it was handed. */
    readonly failure: InputFailure,
  ) {
    super(
      `Task ${key === undefined ? task : `"${key}" (${task})`} was handed the failure of its input ${failure.task} (${failure.code}: ${failure.message}), and its trigger rule allSucceeded runs only on results: give it trigger 'allDone' to run it after failures, or retry the failed input (retryFailed)`,
      {
        path: task,
        cliMessage: `Task ${key === undefined ? task : `"${key}" (${task})`} was handed the failure of its input ${failure.task} (${failure.code}: ${failure.message}), and its trigger rule allSucceeded runs only on results: give it trigger 'allDone' to run it after failures, or retry the failed input (zk-plan retry <plan>)`,
      },
    );
  }
}
named(InputFailedError, 'InputFailedError');

/**
 * `getResult` of a task that completed as skipped: it has no result. `reason` says why it was
 * skipped.
 *
 * @category Errors
 */
export class TaskSkippedError extends ZkPlanError {
  readonly code = 'TASK_SKIPPED';
  constructor(
    task: string,
    /** Why it was skipped. */
    readonly reason: string,
  ) {
    super(`Task ${task} was skipped, so it has no result: ${reason}`, { path: task });
  }
}
named(TaskSkippedError, 'TaskSkippedError');
