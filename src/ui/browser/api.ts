/**
 * The pages' side of the view's HTTP API (src/ui/ui-server.ts and its *-routes.ts): JSON reads, the
 * event streams, and the write actions with their bearer token. Every answer's shape is a type of ui-wire.ts.
 */
import type { UiErrorBody } from '../ui-wire.js';

/** A JSON read; rejects with the server's message when it answers with an error. */
export async function getJson<T>(url: string): Promise<T> {
  return (await readAnswer(await fetch(url, { headers: { Accept: 'application/json' } }))) as T;
}

/** The JSON body of a successful answer; else an error with the server's code and message, or the status when the body is no JSON error. */
async function readAnswer(response: Response): Promise<unknown> {
  const text = await response.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new Error(
      response.ok
        ? `the view answered something other than JSON (${response.status})`
        : `${response.status} ${text.trim().slice(0, 200)}`,
    );
  }
  if (response.ok) return body;
  const error = (body as Partial<UiErrorBody> | null)?.error;
  throw new Error(
    error !== undefined ? `${error.code}: ${error.message}` : `request failed (${response.status})`,
  );
}

/** The live indicator in a page's header. */
export function showLive(element: HTMLElement, live: boolean, text: string): void {
  element.dataset['live'] = live ? 'live' : 'down';
  element.textContent = text;
}

/** Opens an event stream and calls a handler per event type with its parsed data; the browser reconnects by itself. `onLive` hears it go down and up. */
export function subscribe(
  url: string,
  handlers: Readonly<Record<string, (data: unknown) => void>>,
  live: HTMLElement,
  onLive: (up: boolean) => void = () => undefined,
): EventSource {
  const source = new EventSource(url);
  for (const [type, handle] of Object.entries(handlers)) {
    source.addEventListener(type, (event) =>
      handle(JSON.parse((event as MessageEvent<string>).data) as unknown),
    );
  }
  source.onopen = () => {
    showLive(live, true, 'live');
    onLive(true);
  };
  source.onerror = () => {
    if (source.readyState !== EventSource.CLOSED) showLive(live, false, 'reconnecting\u2026');
    onLive(false);
  };
  return source;
}

export type PlanAction = 'pause' | 'resume' | 'cancel' | 'retry';

const TOKEN_KEY = 'zk-plan-ui-token';

/**
 * The bearer token for actions. `zk-plan ui --allow-actions` prints the view's URL with
 * `#token=<token>`: the fragment never reaches a server; the page keeps it for this tab in
 * sessionStorage and takes it out of the address bar.
 */
export function actionToken(): string | undefined {
  const fragment = new URLSearchParams(location.hash.slice(1)).get('token');
  if (fragment !== null && fragment !== '') {
    sessionStorage.setItem(TOKEN_KEY, fragment);
    history.replaceState(null, '', location.pathname + location.search);
  }
  return sessionStorage.getItem(TOKEN_KEY) ?? undefined;
}

/** Performs an action on a plan; resolves the server's answer, rejects with its message. */
export async function postAction(
  action: PlanAction,
  plan: string,
  token: string,
  reason?: string,
): Promise<Record<string, unknown>> {
  const query = new URLSearchParams({ path: plan });
  if (reason !== undefined && reason !== '') query.set('reason', reason);
  const response = await fetch(`/api/actions/${action}?${query.toString()}`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}` },
  });
  return (await readAnswer(response)) as Record<string, unknown>;
}
