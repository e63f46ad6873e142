/**
 * The web view: a small node:http server on loopback that lists the plans under a parent and
 * draws a plan's graph, live. The pages' HTML comes from src/ui/page-html.ts, their scripts and
 * stylesheet from src/ui/browser/ (bundled by src/ui/ui-assets.ts); the graph is laid
 * out in the browser by elkjs, in a Web Worker; updates come over Server-Sent Events, pushed when
 * ZooKeeper watches fire (src/ui/plan-feed.ts), not polled; only the plans page's section of
 * live workers, limits, schedules and jobs is read every 5 s (workers rewrite their records that often).
 *
 * ```ts
 * const ui = await startUiServer({ zkPlan, parent: '/plans', port: 8080 });
 * console.log(`web view at ${ui.url}`);
 * // …
 * await ui.close();
 * ```
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { MIN_ACTIONS_TOKEN_LENGTH, actionOf } from './ui-actions.js';
import { InvalidArgumentError } from '../errors/usage-errors.js';
import { hostnameOf, isLoopbackHost, statusOf } from './http-rules.js';
import type { ZkPlan } from '../zk-plan.js';
import { assertValidPath } from '../zk/layout.js';
import type { FeedTiming } from './feed.js';
import { errorPage, send, sendHtml, sendJson } from './http-answers.js';
import type { UiContext, UiRoute } from './ui-context.js';
import { UiFeeds } from './ui-feeds.js';
import { AssetCache } from './asset-cache.js';
import { ASSET_ROUTES, serveUiAsset } from './asset-routes.js';
import { APP_ROUTES } from './app-routes.js';
import { CLUSTER_ROUTES } from './cluster-routes.js';
import { ACTION_ROUTES, handleAction } from './action-routes.js';
import { servedAuthorities } from './action-guard.js';
import { PLAN_ROUTES } from './plan-routes.js';
import { TASK_ROUTES } from './task-routes.js';
import { TIMELINE_ROUTES } from './timeline-routes.js';
import { DEFAULTS } from '../config/defaults.js';

export { isLoopbackHost };

/** Options of startUiServer: the ZkPlan it reads through, the parent it shows, where it listens, and what else it lists. */
export interface UiServerOptions {
  /** The ZkPlan whose session the view reads through (and sets its watches on). */
  readonly zkPlan: ZkPlan;
  /** The parent whose plans are shown (`<parent>/plan-N`); nothing outside it is served. */
  readonly parent: string;
  /** TCP port; 0 picks a free one (see `url`). */
  readonly port: number;
  /** A loopback address or `localhost`: reading needs no authentication, so the view stays on this machine. @defaultValue DEFAULTS.listenHost ('127.0.0.1') */
  readonly host?: string;
  /**
   * Requires `Authorization: Bearer <actionsToken>` on every action (POST /api/actions/<action>):
   * for a machine shared with other users, or a view reached through a tunnel or another name.
   * Without it, the view's own pages take actions, checked by their `Host` and `Origin`
   * (src/ui/action-guard.ts). @defaultValue none: actions from the view's own pages
   */
  readonly actionsToken?: string;
  /** No actions at all: pause, resume, cancel, retry, rerun and trigger are refused. @defaultValue DEFAULTS.uiReadOnly (false) */
  readonly readOnly?: boolean;
  /** A schedules' parent whose schedules the plans page lists, with links to their runs. @defaultValue none */
  readonly schedules?: string;
  /** A jobs' parent (`zkPlan.jobs(parent)`) whose jobs the plans page lists, with each worker's items and their fencing tokens. @defaultValue none */
  readonly jobs?: string;
  /** Coalescing, safety-refresh and linger times of the live feeds. @defaultValue DEFAULTS.uiFeeds */
  readonly timing?: FeedTiming;
}

/** A running web view (startUiServer): its URL, and `close()` to stop it. */
export interface UiServer {
  /** Base URL, e.g. `http://127.0.0.1:43125/`. */
  readonly url: string;
  /** Ends every event stream, stops the feeds' watches and closes the server. */
  close(): Promise<void>;
}

/** The routes of GET and HEAD requests, by path; any other path is a static asset or 404. */
const ROUTES = new Map<string, UiRoute>(
  Object.entries({
    ...PLAN_ROUTES,
    ...APP_ROUTES,
    ...TASK_ROUTES,
    ...TIMELINE_ROUTES,
    ...CLUSTER_ROUTES,
    ...ACTION_ROUTES,
    ...ASSET_ROUTES,
  }),
);

/** Starts the web view; resolves once it listens. */
export async function startUiServer(options: UiServerOptions): Promise<UiServer> {
  const { zkPlan, parent, port } = options;
  const host = options.host ?? DEFAULTS.listenHost;
  assertUiServerOptions(options, host);
  const timing: FeedTiming = { lingerMs: DEFAULTS.uiFeeds.lingerMs, ...options.timing };
  let ctx: UiContext | undefined;
  const server = createServer((req, res) => {
    // Requests come once the server listens, when ctx is set.
    if (ctx === undefined) res.destroy();
    else handleRequest(ctx, req, res).catch(() => res.destroy());
  });
  server.on('clientError', (_error, socket) => socket.destroy());
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const urlHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const readOnly = options.readOnly ?? DEFAULTS.uiReadOnly;
  ctx = {
    zkPlan,
    parent,
    actions: readOnly
      ? { mode: 'off' }
      : options.actionsToken !== undefined
        ? { mode: 'token', token: options.actionsToken }
        : { mode: 'same-origin', served: servedAuthorities(address.address, address.port) },
    enableActionsCommand: uiCommand(options, host, address.port),
    schedules: options.schedules,
    jobs: options.jobs,
    assets: new AssetCache(),
    feeds: new UiFeeds(zkPlan, parent, timing),
  };
  const feeds = ctx.feeds;

  return {
    url: `http://${urlHost}:${address.port}/`,
    async close(): Promise<void> {
      if (feeds.closing) return;
      feeds.close();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
    },
  };
}

/** `zk-plan ui` with this view's parent, address and lists (its connection options left out: they may hold credentials). */
function uiCommand(options: UiServerOptions, host: string, port: number): string {
  const words = ['zk-plan', 'ui', options.parent, '--port', String(port)];
  if (host !== DEFAULTS.listenHost) words.push('--host', host);
  if (options.schedules !== undefined) words.push('--schedules', options.schedules);
  if (options.jobs !== undefined) words.push('--jobs', options.jobs);
  return words.map(shellWord).join(' ');
}

/** A word as a POSIX shell reads it back: quoted when it holds anything but plain characters. */
function shellWord(word: string): string {
  return /^[\w/.:@%+=,-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}

/** Throws InvalidArgumentError for options the view cannot start with, before anything starts. */
function assertUiServerOptions(options: UiServerOptions, host: string): void {
  const { parent, port } = options;
  assertValidPath('parent', parent);
  if (options.schedules !== undefined) assertValidPath('schedules', options.schedules);
  if (options.jobs !== undefined) assertValidPath('jobs', options.jobs);
  if (!Number.isInteger(port) || port < 0 || port > 65_535)
    throw new InvalidArgumentError(
      'port',
      `expected an integer from 0 to 65535, got ${String(port)}`,
    );
  if (!isLoopbackHost(host)) {
    throw new InvalidArgumentError(
      'host',
      `the web view needs no authentication to read and listens on loopback only (127.0.0.1, ::1, localhost), not "${host}"`,
    );
  }
  if (options.readOnly !== undefined && typeof options.readOnly !== 'boolean')
    throw new InvalidArgumentError(
      'readOnly',
      `expected true or false, got ${String(options.readOnly)}`,
    );
  if (options.readOnly === true && options.actionsToken !== undefined)
    throw new InvalidArgumentError(
      'actionsToken',
      'a read-only view takes no actions, so it takes no actions token: give one or the other',
    );
  if (
    options.actionsToken !== undefined &&
    (typeof options.actionsToken !== 'string' ||
      options.actionsToken.length < MIN_ACTIONS_TOKEN_LENGTH)
  ) {
    throw new InvalidArgumentError(
      'actionsToken',
      `expected a secret of at least ${MIN_ACTIONS_TOKEN_LENGTH} characters (e.g. openssl rand -base64 24): with a guessable one any local program or page could pause or cancel plans`,
    );
  }
}

/**
 * Answers one request: only under a loopback Host name; actions (POST) apart; then GET and HEAD
 * by route, an error answered as JSON to the API and as a page otherwise.
 */
async function handleRequest(
  ctx: UiContext,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const hostHeader = req.headers.host ?? '';
  const url = new URL(req.url ?? '/', 'http://localhost');
  const action = actionOf(url.pathname);
  if (!isLoopbackHost(hostnameOf(hostHeader))) {
    // DNS rebinding: a page of another site reaching this port through a name that resolves to loopback.
    if (action !== undefined) {
      sendJson(res, 403, {
        error: {
          code: 'HOST_MISMATCH',
          message: 'the web view answers loopback host names only: DNS rebinding is refused',
        },
      });
      return;
    }
    send(
      res,
      403,
      'text/plain; charset=utf-8',
      'Forbidden: the web view answers loopback host names only\n',
    );
    return;
  }
  if (action !== undefined) {
    await handleAction(ctx, req, res, url, action);
    return;
  }
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    send(res, 405, 'text/plain; charset=utf-8', 'Method Not Allowed\n', { Allow: 'GET, HEAD' });
    return;
  }
  const api = url.pathname.startsWith('/api/');
  try {
    const route = ROUTES.get(url.pathname) ?? serveUiAsset;
    await route(ctx, req, res, url);
  } catch (error) {
    if (res.headersSent) {
      res.destroy();
      return;
    }
    const { status, code, message } = statusOf(error);
    if (api) sendJson(res, status, { error: { code, message } });
    else sendHtml(res, status, errorPage(status, message));
  }
}
