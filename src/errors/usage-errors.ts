import { ZkPlanError, named } from './base-error.js';

/**
 * Thrown by any public function whose arguments are invalid; `argument` names the offending one.
 *
 * @category Errors
 */
export class InvalidArgumentError extends ZkPlanError {
  readonly code = 'INVALID_ARGUMENT';
  constructor(
    readonly argument: string,
    message: string,
    path?: string,
  ) {
    super(`Invalid ${argument}: ${message}`, { path });
  }
}
named(InvalidArgumentError, 'InvalidArgumentError');

/**
 * Thrown when a method is called in a lifecycle state that does not allow it (e.g. after `close()`).
 *
 * @category Errors
 */
export class IllegalStateError extends ZkPlanError {
  readonly code = 'ILLEGAL_STATE';
  constructor(message: string) {
    super(message);
  }
}
named(IllegalStateError, 'IllegalStateError');

/**
 * Thrown by `waitForCompletion` when the plan still has tasks after the timeout.
 *
 * @category Errors
 */
export class WaitTimeoutError extends ZkPlanError {
  readonly code = 'WAIT_TIMEOUT';
  constructor(
    path: string,
    readonly timeoutMs: number,
    readonly remainingTasks: number,
  ) {
    const what = `Plan ${path} still has ${remainingTasks} task(s) after ${timeoutMs} ms: are workers running on its parent`;
    const parent = path.slice(0, path.lastIndexOf('/')) || '/';
    super(
      `${what} (startWorkers or the DI module), and do they know every function the plan uses?`,
      {
        path,
        cliMessage: `${what} (zk-plan worker --parent ${parent} --functions <module>), and do they know every function the plan uses? (zk-plan why ${path} tells what holds its tasks)`,
      },
    );
  }
}
named(WaitTimeoutError, 'WaitTimeoutError');
