/**
 * The pages' side of the view's HTTP API (src/ui/ui-server.ts and its *-routes.ts): JSON reads, the
 * event streams, and the write actions with their bearer token. Every answer's shape is a type of ui-wire.ts.
 */
import type { UiActionsInfo, UiErrorBody } from '../ui-wire.js';

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
/** Every action the view takes: the plan's, rerun from a task, trigger of a schedule. */
export type ViewAction = PlanAction | 'rerun' | 'trigger';

const TOKEN_KEY = 'zk-plan-ui-token';

/**
 * The bearer token for actions, when the view wants one (`zk-plan ui --allow-actions` prints its
 * URL with `#token=<token>`): the fragment never reaches a server; the page keeps it for this tab
 * in sessionStorage and takes it out of the address bar.
 */
export function actionToken(): string | undefined {
  const fragment = new URLSearchParams(location.hash.slice(1)).get('token');
  if (fragment !== null && fragment !== '') {
    sessionStorage.setItem(TOKEN_KEY, fragment);
    history.replaceState(null, '', location.pathname + location.search);
  }
  return sessionStorage.getItem(TOKEN_KEY) ?? undefined;
}

/** Whether this page may take actions, and if not, what to tell the user. */
export interface ActionAccess {
  readonly usable: boolean;
  /** Why not, and how to enable them (the command), when not usable. */
  readonly why?: string;
  readonly token?: string;
}

/** Whether this page may take actions, from what `/api/actions` says of the view and the token this tab holds. */
export async function actionAccess(): Promise<ActionAccess> {
  const token = actionToken();
  const info = await getJson<UiActionsInfo>('/api/actions');
  switch (info.mode) {
    case 'off':
      return {
        usable: false,
        why: `Actions are off (read-only view). To take them: ${info.enable}`,
      };
    case 'token':
      return token === undefined
        ? {
            usable: false,
            why: `Actions need the token: open the URL that ${info.enable} printed (it ends in #token=…).`,
          }
        : { usable: true, token };
    case 'same-origin':
      // Through a tunnel or another name the server refuses them: say so before a click.
      return info.origins.includes(location.origin)
        ? { usable: true }
        : {
            usable: false,
            why: `Actions are taken at ${info.origins.join(' or ')} only, not through ${location.origin}. Open that, or start the view with ${info.enable} and open the URL it prints.`,
          };
  }
}

/**
 * Takes an action (`query`: `path` of a plan or task, `reason`, `schedule`), with the token when
 * the view wants one; resolves the server's answer, rejects with its code and message.
 */
export async function postAction(
  action: ViewAction,
  query: Readonly<Record<string, string>>,
  token: string | undefined,
): Promise<Record<string, unknown>> {
  const response = await fetch(`/api/actions/${action}?${new URLSearchParams(query).toString()}`, {
    method: 'POST',
    headers: token === undefined ? {} : { Authorization: `Bearer ${token}` },
  });
  return (await readAnswer(response)) as Record<string, unknown>;
}
