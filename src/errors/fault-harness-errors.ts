/**
 * Errors of the fault harness (`zk-plan/testing`): a run that could not be made, and a report that
 * shows a plan is not fault-tolerant.
 */
import { ZkPlanError, named } from './base-error.js';

/**
 * Why a fault-harness run could not be made: `FAULT_HARNESS_BUILD_FAILED` (the plan builder threw, or
 * the spec was refused), `FAULT_HARNESS_BASELINE_INCOMPLETE` (the fault-free run did not finish by the
 * deadline: the plan cannot be judged under faults), `FAULT_HARNESS_WORKERS_FAILED` (the worker
 * processes did not start: the functions module did not load, say).
 *
 * @category Fault harness
 */
export type FaultHarnessErrorCode =
  | 'FAULT_HARNESS_BUILD_FAILED'
  | 'FAULT_HARNESS_BASELINE_INCOMPLETE'
  | 'FAULT_HARNESS_WORKERS_FAILED';

/**
 * Thrown by `runFaultHarness` when the run itself could not be made (not when the plan proves not
 * fault-tolerant: that is in the report). Every process the run started is stopped first.
 *
 * @category Fault harness
 */
export class FaultHarnessError extends ZkPlanError {
  constructor(
    readonly code: FaultHarnessErrorCode,
    message: string,
    details: { path?: string; cause?: unknown } = {},
  ) {
    super(message, details);
  }
}
named(FaultHarnessError, 'FaultHarnessError');

/**
 * Thrown by `expectFaultTolerant` when a fault report shows a problem; `problems` lists each, as the
 * message does (functions not idempotent, tasks whose result differs, tasks that never finished,
 * faults asked for but never injected).
 *
 * @category Fault harness
 */
export class NotFaultTolerantError extends ZkPlanError {
  readonly code = 'NOT_FAULT_TOLERANT';
  constructor(readonly problems: readonly string[]) {
    super(
      `the plan is not fault-tolerant under the faults injected:\n${problems.map((problem) => `- ${problem}`).join('\n')}`,
    );
  }
}
named(NotFaultTolerantError, 'NotFaultTolerantError');
