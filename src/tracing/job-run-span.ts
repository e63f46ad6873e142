/**
 * How a job run's span ends: OK for a run whose function returned, ERROR with the exception for one
 * that threw, UNSET for one the job worker aborted (its share changed, a lease ran out, the worker
 * stopped), which is nobody's failure: what aborted it is recorded as an event.
 */
import { ATTR_JOB_OUTCOME } from './attributes.js';
import type { TracedSpan } from './tracing.js';

/** How a run of a job's function ended, in the job runner's terms. */
export type JobRunEnding = 'returned' | 'threw' | 'aborted';

/** Ends a job run's span with its outcome (`thrown`: what the function threw, if it did). */
export function endJobRunSpan(
  span: TracedSpan | undefined,
  ending: JobRunEnding,
  thrown: unknown,
): void {
  if (span === undefined) return;
  if (ending === 'returned') {
    span.set(ATTR_JOB_OUTCOME, 'succeeded');
    span.succeeded();
    return;
  }
  if (ending === 'threw') {
    span.set(ATTR_JOB_OUTCOME, 'failed');
    span.failed(thrown);
    return;
  }
  span.set(ATTR_JOB_OUTCOME, 'aborted');
  span.ended(thrown);
}
