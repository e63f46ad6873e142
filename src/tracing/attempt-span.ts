/**
 * How a task attempt's span begins and ends, in the worker loop's terms. The status follows whose
 * the outcome is: OK for a try that completed, skipped, handed over or said "not yet"; ERROR for a
 * failure of the task (charged) or an infrastructure fault that broke the try; UNSET for a try the
 * worker gave up on purpose (drain, pause, cancel, failFast, session expiry), which is nobody's
 * failure and is tried again elsewhere: its reason is recorded as an event, not as an error.
 */
import {
  ATTR_TASK_CHARGED,
  ATTR_TASK_FINAL,
  ATTR_TASK_GIVEN_BACK,
  ATTR_TASK_OUTCOME,
} from './attributes.js';
import type { TracedSpan } from './tracing.js';

/** An ending of a try that is no failure. */
export type AttemptSuccess = 'completed' | 'skipped' | 'continued' | 'waiting';

/** How a failed try was judged by the worker. */
export interface AttemptFailure {
  readonly charged: boolean;
  readonly final: boolean;
  /** Why it was given back uncharged (TaskGivenBackReason), when it was. */
  readonly givenBack?: string;
}

/** Ends a try's span with status OK and its outcome. */
export function attemptSucceeded(span: TracedSpan | undefined, outcome: AttemptSuccess): void {
  if (span === undefined) return;
  span.set(ATTR_TASK_OUTCOME, outcome);
  span.succeeded();
}

/**
 * Ends a failed try's span: ERROR with the exception for a charged failure or a fault, UNSET with
 * the reason as an event for a try the worker gave up on purpose.
 */
export function attemptFailed(
  span: TracedSpan | undefined,
  error: unknown,
  failure: AttemptFailure,
): void {
  if (span === undefined) return;
  span.set(ATTR_TASK_CHARGED, failure.charged);
  span.set(ATTR_TASK_FINAL, failure.final);
  if (failure.givenBack === undefined || failure.givenBack === 'given-back') {
    span.set(ATTR_TASK_OUTCOME, 'failed');
    if (failure.givenBack !== undefined) span.set(ATTR_TASK_GIVEN_BACK, failure.givenBack);
    span.failed(error);
    return;
  }
  span.set(ATTR_TASK_OUTCOME, 'given-back');
  span.set(ATTR_TASK_GIVEN_BACK, failure.givenBack);
  span.ended(error);
}

/** Ends a try's span that no outcome reached (its plan was deleted under it): no status. */
export function attemptAbandoned(span: TracedSpan | undefined): void {
  if (span === undefined) return;
  span.set(ATTR_TASK_OUTCOME, 'gone');
  span.ended();
}
