/**
 * Failed job runs as alerts: each run of a job function that throws (a `job:run` event that ended
 * `failed`, retries included, each saying whether a retry is left) is handed to a listener, such as
 * `jobRunWebhook`, by the process that ran it. A run happens in one process, so each failure is
 * handed on once; a listener that throws is called again with doubling pauses, up to `maxAttempts`
 * times. A process that dies before delivering leaves the alert undelivered: the failure stays in
 * the job's history (`zk-plan jobs runs`) and its items' last failures.
 */
import type { EventEmitter } from 'node:events';
import { DEFAULTS } from '../config/defaults.js';
import { runError } from '../jobs/job-run-record.js';
import { sleepUnless } from '../util/abort-signals.js';
import type { ZkPlanEvents } from '../worker/worker-events.js';
import type { JobRunWebhookBody } from './webhook.js';

/**
 * How failed runs are handed on: how often a failing listener is tried, the first pause, and whom to tell of one given up.
 *
 * @category Events and alerts
 */
export interface JobRunAlertOptions {
  /** @defaultValue DEFAULTS.planEvents.maxAttempts (5) */
  readonly maxAttempts?: number;
  /** The pause after the first failed try, doubling after each. @defaultValue DEFAULTS.planEvents.retryDelayMs (1 000) */
  readonly retryDelayMs?: number;
  /** Told of an alert given up after its last try. */
  readonly onError?: (error: Error, runId: string) => void;
}

/**
 * What `forwardJobRunFailures` gives back.
 *
 * @category Events and alerts
 */
export interface JobRunAlertForwarding {
  /** Stops listening; resolves once deliveries under way have ended (their pauses cut short). */
  stop(): Promise<void>;
}

/** The alert of a `job:run` event, or undefined when it is not a failed run's end. */
export function jobRunAlertOf(
  event: ZkPlanEvents['job:run'][0],
  at: Date,
): JobRunWebhookBody | undefined {
  if (event.state !== 'ended' || event.outcome !== 'failed') return undefined;
  return {
    event: 'job:run-failed',
    id: event.run,
    jobs: event.jobs,
    job: event.job,
    worker: event.workerId,
    cause: event.cause,
    attempt: event.attempt,
    final: event.final === true,
    items: event.items.map((item) => ({ id: item.id, token: item.token })),
    error: runError(event.error),
    at: at.toISOString(),
  };
}

/**
 * Hands each failed run of the job workers of `events` (a ZkPlan) to `listener`; resolves `stop`,
 * which stops listening and waits for deliveries under way (their pauses are cut short).
 *
 * @category Events and alerts
 */
export function forwardJobRunFailures(
  events: EventEmitter<ZkPlanEvents>,
  listener: (alert: JobRunWebhookBody) => Promise<void> | void,
  options: JobRunAlertOptions = {},
): JobRunAlertForwarding {
  const maxAttempts = options.maxAttempts ?? DEFAULTS.planEvents.maxAttempts;
  const retryDelayMs = options.retryDelayMs ?? DEFAULTS.planEvents.retryDelayMs;
  const stopping = new AbortController();
  const underWay = new Set<Promise<void>>();
  const deliver = async (alert: JobRunWebhookBody): Promise<void> => {
    for (let attempt = 1; ; attempt++) {
      try {
        await listener(alert);
        return;
      } catch (error) {
        if (attempt >= maxAttempts || stopping.signal.aborted) {
          options.onError?.(error instanceof Error ? error : new Error(String(error)), alert.id);
          return;
        }
        await sleepUnless(retryDelayMs * 2 ** (attempt - 1), stopping.signal);
        if (stopping.signal.aborted) {
          options.onError?.(new Error('the worker stopped before it was delivered'), alert.id);
          return;
        }
      }
    }
  };
  const onRun = (event: ZkPlanEvents['job:run'][0]): void => {
    const alert = jobRunAlertOf(event, new Date());
    if (alert === undefined || stopping.signal.aborted) return;
    const delivery = deliver(alert).finally(() => underWay.delete(delivery));
    underWay.add(delivery);
  };
  events.on('job:run', onRun);
  return {
    stop: async () => {
      events.off('job:run', onRun);
      stopping.abort();
      await Promise.all([...underWay]);
    },
  };
}
