/**
 * A PlanEventListener that POSTs each event as JSON to a URL (what `zk-plan worker --alert-webhook`
 * runs). A timeout, a network error, a redirect (never followed) or an answer other than 2xx
 * throws, so alerts.subscribe calls it again with doubling pauses; the error names the URL's origin only.
 */
import { assertDurationMs } from '../config/option-checks.js';
import { InvalidArgumentError } from '../errors/usage-errors.js';
import type { PlanEventListener } from './plan-event-watcher.js';
import type { PlanEvent } from './plan-events.js';

/**
 * The JSON body of a webhook POST.
 *
 * @category Events and alerts
 */
export interface WebhookBody {
  readonly event: PlanEvent['kind'];
  readonly id: string;
  readonly plan: string;
  /** The plan's name, when it has one. */
  readonly planName: string | null;
  readonly task: string | null;
  /** The task's key, when it has one (`task:failed`; `plan:failed`: of its first failed task). */
  readonly key: string | null;
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
    planName: event.planName ?? null,
    task: event.task ?? null,
    key: event.key ?? null,
    error: event.error ?? null,
    reason: event.reason ?? null,
    counts: event.counts,
    at: event.at.toISOString(),
  };
}

/**
 * POSTs each event to `url`. The URL's path and query (where Slack-style webhooks keep their
 * secret) and its user info never appear in an error: messages name the URL's origin only. A
 * redirect is not followed (it would re-POST the event to wherever it points): it is a failed
 * delivery, tried again like any other, and the error says to configure the URL it points to.
 *
 * @category Events and alerts
 */
export function webhookListener(url: string, timeoutMs: number): PlanEventListener {
  const post = webhookPoster(url, timeoutMs);
  return (event) =>
    post(webhookBody(event), `${event.plan}#${event.id}`, `${event.kind} of ${event.plan}`);
}

/**
 * The JSON body of a webhook POST for a failed job run (`jobRunWebhook`).
 *
 * @category Events and alerts
 */
export interface JobRunWebhookBody {
  readonly event: 'job:run-failed';
  /** The run's node name in the job's history (`zk-plan jobs runs <job>`). */
  readonly id: string;
  readonly jobs: string;
  readonly job: string;
  readonly worker: string;
  readonly cause: string;
  readonly attempt: number;
  /** No retry left before the job's next tick. */
  readonly final: boolean;
  readonly items: readonly { readonly id: string; readonly token: number }[];
  readonly error: { readonly type: string; readonly message: string; readonly code?: string };
  readonly at: string;
}

/**
 * POSTs each failed job run to `url`, as `webhookListener` does plan events (the same rules for
 * secrets in the URL, redirects and time limits).
 *
 * @category Events and alerts
 */
export function jobRunWebhook(
  url: string,
  timeoutMs: number,
): (body: JobRunWebhookBody) => Promise<void> {
  const post = webhookPoster(url, timeoutMs);
  return (body) =>
    post(body, `${body.jobs}/${body.job}#${body.id}`, `failed run ${body.id} of job ${body.job}`);
}

/** A POST of JSON bodies to a checked http(s) URL; an error names the URL's origin only. */
function webhookPoster(
  url: string,
  timeoutMs: number,
): (body: unknown, idempotencyKey: string, about: string) => Promise<void> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new InvalidArgumentError(
      'url',
      'expected an http or https URL, got text that is not a URL',
    ); // the text itself may hold the secret
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    throw new InvalidArgumentError(
      'url',
      `expected an http or https URL, got a URL with scheme ${JSON.stringify(parsed.protocol.slice(0, -1))}`,
    );
  if (parsed.username !== '' || parsed.password !== '')
    throw new InvalidArgumentError(
      'url',
      'a URL with user info (user:password@host) cannot be used: fetch refuses to send it',
    );
  assertDurationMs('timeoutMs', timeoutMs);
  const target = `the webhook at ${parsed.origin}`;
  return async (body, idempotencyKey, about) => {
    let response: Response;
    try {
      response = await fetch(parsed, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'idempotency-key': idempotencyKey,
        },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(timeoutMs),
        redirect: 'error',
      });
    } catch (error) {
      throw new Error(
        `${target} did not take ${about}: ${redact(whyFetchFailed(error, timeoutMs), parsed)}`,
      );
    }
    await response.body?.cancel(); // the answer's body is not read: free the connection
    if (!response.ok) throw new Error(`${target} answered ${response.status} to ${about}`);
  };
}

/** Why fetch threw, in a few words: the cause's code or message (undici's own message is only "fetch failed"). */
function whyFetchFailed(error: unknown, timeoutMs: number): string {
  if (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError'))
    return `no answer within ${timeoutMs} ms`;
  const cause =
    error instanceof Error
      ? (error.cause as { code?: unknown; message?: unknown } | undefined)
      : undefined;
  const detail =
    typeof cause?.message === 'string' && cause.message !== ''
      ? cause.message
      : error instanceof Error
        ? error.message
        : String(error);
  if (/redirect/i.test(detail))
    return 'it answered with a redirect, which is not followed: configure the URL it points to';
  return typeof cause?.code === 'string' && !detail.includes(cause.code)
    ? `${detail} (${cause.code})`
    : detail;
}

/** `text` without the URL's path, query or user info, should a lower layer have quoted them. */
function redact(text: string, url: URL): string {
  const secrets = [
    url.href,
    `${url.pathname}${url.search}`,
    url.search,
    url.username,
    url.password,
  ].filter((part) => part.length > 1);
  return secrets.reduce((redacted, secret) => redacted.split(secret).join('…'), text);
}
