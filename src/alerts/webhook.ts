/**
 * A PlanEventListener that POSTs each event as JSON to a URL (what `zk-plan worker --alert-webhook`
 * runs). A timeout, a network error or an answer other than 2xx throws, so onPlanEvent calls it
 * again with doubling pauses.
 */
import { assertDurationMs } from '../config/options.js';
import { InvalidArgumentError } from '../errors/usage-errors.js';
import type { PlanEventListener } from './plan-event-watcher.js';
import type { PlanEvent } from './plan-events.js';

/** The JSON body of a webhook POST. */
export interface WebhookBody {
  readonly event: PlanEvent['kind'];
  readonly id: string;
  readonly plan: string;
  readonly task: string | null;
  readonly error: PlanEvent['error'] | null;
  readonly reason: string | null;
  readonly counts: PlanEvent['counts'];
  readonly at: string;
}

export function webhookBody(event: PlanEvent): WebhookBody {
  return {
    event: event.kind,
    id: event.id,
    plan: event.plan,
    task: event.task ?? null,
    error: event.error ?? null,
    reason: event.reason ?? null,
    counts: event.counts,
    at: event.at.toISOString(),
  };
}

export function webhookListener(url: string, timeoutMs: number): PlanEventListener {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new InvalidArgumentError('url', `expected an http or https URL, got ${JSON.stringify(url)}`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    throw new InvalidArgumentError('url', `expected an http or https URL, got ${JSON.stringify(url)}`);
  assertDurationMs('timeoutMs', timeoutMs);
  return async (event) => {
    const response = await fetch(parsed, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': `${event.plan}#${event.id}` },
      body: JSON.stringify(webhookBody(event)),
      signal: AbortSignal.timeout(timeoutMs),
    });
    await response.body?.cancel(); // the answer's body is not read: free the connection
    if (!response.ok) throw new Error(`the webhook ${parsed.origin}${parsed.pathname} answered ${response.status} to ${event.kind} of ${event.plan}`);
  };
}
