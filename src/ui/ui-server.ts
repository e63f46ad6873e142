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
import { readFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import {
  PlanCancelledError,
  PlanNotFoundError,
  ResultNotFoundError,
} from '../errors/plan-errors.js';
import {
  MIN_ACTIONS_TOKEN_LENGTH,
  actionOf,
  authorize,
  performAction,
  type UiAction,
} from './ui-actions.js';
import { InvalidArgumentError } from '../errors/usage-errors.js';
import {
  ASSET_TYPES,
  HTML_CSP,
  HttpError,
  SECURITY_HEADERS,
  hostnameOf,
  isLoopbackHost,
  statusOf,
} from './http-rules.js';
import type { ZkPlan } from '../zk-plan.js';
import type { PlanView } from '../plan/plan-view.js';
import { HISTORY, assertValidPath, childPath, nameOf, parentOf } from '../zk/layout.js';
import { taskLogText } from '../logs/log-text.js';
import { planPageHtml, plansPageHtml } from './page-html.js';
import { isUiAssetName, loadUiAssets, type UiAssets } from './ui-assets.js';
import {
  PlanFeed,
  PlansFeed,
  type FeedTiming,
  type PlanFeedMessage,
  type PlansFeedMessage,
} from './plan-feed.js';
import {
  escapeHtml,
  formatValue,
  goneTaskDetail,
  isPlanUnder,
  isTaskUnder,
  planRow,
  stringifySafe,
  taskDetail,
  toJsonSafe,
} from './ui-model.js';
import type { UiTaskDetail } from './ui-wire.js';
import { readCluster } from './ui-cluster.js';

export { isLoopbackHost };

/** Options of startUiServer: the ZkPlan it reads through, the parent it shows, where it listens, and what else it lists. */
export interface UiServerOptions {
  /** The ZkPlan whose session the view reads through (and sets its watches on). */
  readonly zkPlan: ZkPlan;
  /** The parent whose plans are shown (`<parent>/plan-N`); nothing outside it is served. */
  readonly parent: string;
  /** TCP port; 0 picks a free one (see `url`). */
  readonly port: number;
  /** A loopback address or `localhost`: reading needs no authentication, so the view stays on this machine. @defaultValue '127.0.0.1' */
  readonly host?: string;
  /**
   * Enables pause, resume, cancel and retry from the view (POST /api/actions/<action>?path=<plan>),
   * for requests carrying `Authorization: Bearer <actionsToken>`. @defaultValue none: read-only
   */
  readonly actionsToken?: string;
  /** A schedules' parent whose schedules the plans page lists, with links to their runs. @defaultValue none */
  readonly schedules?: string;
  /** A jobs' parent (`zkPlan.jobs(parent)`) whose jobs the plans page lists, with each worker's items and their fencing tokens. @defaultValue none */
  readonly jobs?: string;
  /** Coalescing, safety-refresh and linger times of the live feeds. @defaultValue 250 ms per plan, 1 s for the plans list, 15 s safety refresh, 30 s linger */
  readonly timing?: FeedTiming;
}

/** A running web view (startUiServer): its URL, and `close()` to stop it. */
export interface UiServer {
  /** Base URL, e.g. `http://127.0.0.1:43125/`. */
  readonly url: string;
  /** Ends every event stream, stops the feeds' watches and closes the server. */
  close(): Promise<void>;
}

const SSE_MAX_BUFFER_BYTES = 8 * 1024 * 1024;
const SSE_HEARTBEAT_MS = 20_000;
const TASK_VIEW_FRESH_MS = 2_000;

/** Starts the web view; resolves once it listens. */
export async function startUiServer(options: UiServerOptions): Promise<UiServer> {
  const { zkPlan, parent, port } = options;
  const host = options.host ?? '127.0.0.1';
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
  const timing: FeedTiming = { lingerMs: 30_000, ...options.timing };
  const elkPath = createRequire(import.meta.url).resolve('elkjs/lib/elk.bundled.js');
  let elkSource: Promise<Buffer> | undefined;
  let assets: Promise<UiAssets> | undefined; // loaded (or bundled, from source) on first request

  const planFeeds = new Map<string, PlanFeed>();
  let plansFeed: PlansFeed | undefined;
  const streams = new Set<ServerResponse>();
  let closing = false;

  const planFeed = (plan: string): PlanFeed => {
    let feed = planFeeds.get(plan);
    if (feed === undefined || feed.isClosed) {
      const created: PlanFeed = new PlanFeed(zkPlan, plan, timing, () => {
        if (planFeeds.get(plan) === created) planFeeds.delete(plan);
      });
      planFeeds.set(plan, created);
      feed = created;
    }
    return feed;
  };

  const listPlansFeed = (): PlansFeed => {
    if (plansFeed === undefined || plansFeed.isClosed) {
      const created: PlansFeed = new PlansFeed(zkPlan, parent, timing, () => {
        if (plansFeed === created) plansFeed = undefined;
      });
      plansFeed = created;
    }
    return plansFeed;
  };

  // ---- answers ----------------------------------------------------------------------------
  const send = (
    res: ServerResponse,
    status: number,
    type: string,
    body: string | Buffer,
    headers: Record<string, string> = {},
  ): void => {
    res.writeHead(status, {
      ...SECURITY_HEADERS,
      'Content-Type': type,
      'Content-Length': String(Buffer.byteLength(body)),
      'Cache-Control': 'no-cache',
      ...headers,
    });
    res.end(res.req.method === 'HEAD' ? undefined : body);
  };
  const sendJson = (res: ServerResponse, status: number, value: unknown): void =>
    send(res, status, 'application/json; charset=utf-8', stringifySafe(value));
  const sendHtml = (res: ServerResponse, status: number, html: string): void =>
    send(res, status, 'text/html; charset=utf-8', html, { 'Content-Security-Policy': HTML_CSP });
  const errorPage = (status: number, message: string): string =>
    `<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>${status} · zk-plan</title><link rel="stylesheet" href="/ui.css"></head>` +
    `<body><header><a href="/">Plans</a></header><p class="empty">${escapeHtml(message)}</p></body></html>\n`;

  const requirePath = (url: URL, check: (path: string) => boolean, what: string): string => {
    const path = url.searchParams.get('path');
    if (path === null || path === '')
      throw new HttpError(400, 'INVALID_ARGUMENT', `missing ?path= (the ${what}'s znode path)`);
    if (!check(path))
      throw new HttpError(400, 'INVALID_ARGUMENT', `${path} is not a ${what} under ${parent}`);
    return path;
  };

  const historyKept = async (plan: string): Promise<boolean> =>
    (await zkPlan.zk.exists(childPath(plan, HISTORY))) !== undefined;

  const apiPlans = async (): Promise<unknown> => {
    let summaries;
    try {
      summaries = await zkPlan.plans.list(parent);
    } catch (error) {
      if (error instanceof PlanNotFoundError) return [];
      throw error;
    }
    const kept = await Promise.all(
      summaries.map(async (summary) => summary.historyKept ?? (await historyKept(summary.plan))),
    );
    return summaries.map((summary, index) => ({
      ...planRow(summary, kept[index] === true),
      status: summary.status,
    }));
  };

  const apiTask = async (task: string): Promise<UiTaskDetail> => {
    const plan = parentOf(task);
    const cached = planFeeds.get(plan)?.latest;
    let view: PlanView | undefined =
      cached !== undefined && Date.now() - cached.at < TASK_VIEW_FRESH_MS ? cached.view : undefined;
    let found = view?.tasks.find((entry) => entry.task === task);
    if (found === undefined) {
      view = await zkPlan.plans.describe(plan);
      found = view.tasks.find((entry) => entry.task === task);
    }
    const cancelled = view?.status.state === 'cancelled';
    if (found === undefined && view?.historyKept === true && !cancelled)
      throw new HttpError(404, 'TASK_NOT_FOUND', `${task} is not a task of ${plan}`);
    const detail =
      found === undefined
        ? goneTaskDetail(task, cancelled ? 'cancelled' : 'finished')
        : taskDetail(found);
    if (detail.state === 'done' && (detail.keepResult || detail.gone)) {
      try {
        return { ...detail, result: { value: formatValue(await zkPlan.getResult(task)) } };
      } catch (error) {
        if (!(error instanceof ResultNotFoundError)) throw error;
        return detail.gone
          ? detail
          : {
              ...detail,
              result: {
                unavailable:
                  'The kept result is not there (deleted, or the task is still finishing).',
              },
            };
      }
    }
    if (detail.keepResult)
      return { ...detail, result: { unavailable: 'The result is kept once the task is done.' } };
    if (detail.state === 'done')
      return {
        ...detail,
        result: {
          unavailable:
            'Not kept: a task keeps its result to read here only with the option keepResult: true.',
        },
      };
    return detail;
  };

  /** POST /api/actions/<action>?path=<plan>[&reason=…] with the bearer token. */
  const handleAction = async (
    req: IncomingMessage,
    res: ServerResponse,
    url: URL,
    action: UiAction,
  ): Promise<void> => {
    try {
      if (req.method !== 'POST')
        throw new HttpError(405, 'METHOD_NOT_ALLOWED', 'actions are POST requests');
      authorize(req, options.actionsToken);
      const plan = requirePath(url, (path) => isPlanUnder(parent, path), 'plan');
      sendJson(
        res,
        200,
        await performAction(zkPlan, action, plan, url.searchParams.get('reason') ?? undefined),
      );
    } catch (error) {
      const { status, code, message } = statusOf(error);
      sendJson(res, error instanceof PlanCancelledError ? 409 : status, {
        error: { code, message },
      });
    }
  };

  // ---- Server-Sent Events -----------------------------------------------------------------
  const openStream = <M extends { type: string }>(
    req: IncomingMessage,
    res: ServerResponse,
    subscribe: (listener: (message: M) => void) => () => void,
  ): void => {
    res.writeHead(200, {
      ...SECURITY_HEADERS,
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-cache, no-transform',
      Connection: 'keep-alive',
      'X-Accel-Buffering': 'no',
    });
    res.write('retry: 2000\n\n');
    streams.add(res);
    let unsubscribe: (() => void) | undefined;
    const heartbeat = setInterval(() => res.write(': ping\n\n'), SSE_HEARTBEAT_MS);
    heartbeat.unref();
    const end = (): void => {
      clearInterval(heartbeat);
      streams.delete(res);
      const stop = unsubscribe;
      unsubscribe = undefined;
      stop?.();
      if (!res.writableEnded) res.end();
    };
    req.on('close', end);
    res.on('error', end);
    const listener = (message: M): void => {
      if (res.writableEnded) return;
      if (res.writableLength > SSE_MAX_BUFFER_BYTES) {
        end(); // a client that does not read: let it reconnect and start from a snapshot
        return;
      }
      const { type, ...payload } = message;
      const data =
        'model' in payload
          ? payload.model
          : 'diff' in payload
            ? payload.diff
            : 'plans' in payload
              ? payload.plans
              : payload;
      res.write(`event: ${type}\ndata: ${stringifySafe(data)}\n\n`);
    };
    unsubscribe = subscribe(listener);
    if (res.writableEnded) end();
  };

  // ---- routing ----------------------------------------------------------------------------
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const hostHeader = req.headers.host ?? '';
    if (!isLoopbackHost(hostnameOf(hostHeader))) {
      // DNS rebinding: a page of another site reaching this port through a name that resolves to loopback.
      send(
        res,
        403,
        'text/plain; charset=utf-8',
        'Forbidden: the web view answers loopback host names only\n',
      );
      return;
    }
    const url = new URL(req.url ?? '/', 'http://localhost');
    const action = actionOf(url.pathname);
    if (action !== undefined) {
      await handleAction(req, res, url, action);
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      send(res, 405, 'text/plain; charset=utf-8', 'Method Not Allowed\n', { Allow: 'GET, HEAD' });
      return;
    }
    const api = url.pathname.startsWith('/api/');
    try {
      switch (url.pathname) {
        case '/':
          sendHtml(res, 200, plansPageHtml(parent));
          return;
        case '/plan':
          sendHtml(
            res,
            200,
            planPageHtml(
              requirePath(url, (path) => isPlanUnder(parent, path), 'plan'),
              options.actionsToken !== undefined,
            ),
          );
          return;
        case '/elk.js':
          elkSource ??= readFile(elkPath);
          send(
            res,
            200,
            'text/javascript; charset=utf-8',
            await elkSource.catch((error: unknown) => {
              elkSource = undefined;
              throw error;
            }),
            { 'Cache-Control': 'public, max-age=86400' },
          );
          return;
        case '/api/plans':
          sendJson(res, 200, await apiPlans());
          return;
        case '/api/plan':
          sendJson(
            res,
            200,
            await zkPlan.plans.describe(
              requirePath(url, (path) => isPlanUnder(parent, path), 'plan'),
            ),
          );
          return;
        case '/api/task':
          sendJson(
            res,
            200,
            await apiTask(requirePath(url, (path) => isTaskUnder(parent, path), 'task')),
          );
          return;
        case '/api/task-log':
          sendJson(
            res,
            200,
            await zkPlan.logs.read(requirePath(url, (path) => isTaskUnder(parent, path), 'task')),
          );
          return;
        case '/api/task-log.txt': {
          const task = requirePath(url, (path) => isTaskUnder(parent, path), 'task');
          const fileName = `${nameOf(parentOf(task))}-${nameOf(task)}.log`;
          send(res, 200, 'text/plain; charset=utf-8', taskLogText(await zkPlan.logs.read(task)), {
            'Content-Disposition': `attachment; filename="${fileName}"`,
          });
          return;
        }
        case '/api/why':
          sendJson(
            res,
            200,
            await zkPlan.explain.task(
              requirePath(url, (path) => isTaskUnder(parent, path), 'task'),
            ),
          );
          return;
        case '/api/cluster':
          sendJson(
            res,
            200,
            await readCluster(
              zkPlan,
              parent,
              options.actionsToken !== undefined,
              options.schedules,
              options.jobs,
            ),
          );
          return;
        case '/api/events': {
          const plan = requirePath(url, (path) => isPlanUnder(parent, path), 'plan');
          if (closing) throw new HttpError(503, 'CLOSING', 'the web view is closing');
          openStream<PlanFeedMessage>(req, res, (listener) => planFeed(plan).subscribe(listener));
          return;
        }
        case '/api/plans/events':
          if (closing) throw new HttpError(503, 'CLOSING', 'the web view is closing');
          openStream<PlansFeedMessage>(req, res, (listener) => listPlansFeed().subscribe(listener));
          return;
        default: {
          const name = url.pathname.slice(1);
          if (!isUiAssetName(name))
            throw new HttpError(404, 'NOT_FOUND', `nothing at ${url.pathname}`);
          assets ??= loadUiAssets();
          const loaded = await assets.catch((error: unknown) => {
            assets = undefined; // tried again on the next request
            throw error;
          });
          send(
            res,
            200,
            ASSET_TYPES[name.slice(name.lastIndexOf('.') + 1)] ?? 'application/octet-stream',
            loaded[name],
          );
          return;
        }
      }
    } catch (error) {
      if (res.headersSent) {
        res.destroy();
        return;
      }
      const { status, code, message } = statusOf(error);
      if (api) sendJson(res, status, { error: { code, message } });
      else sendHtml(res, status, errorPage(status, message));
    }
  };

  const server = createServer((req, res) => {
    handle(req, res).catch(() => res.destroy());
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

  return {
    url: `http://${urlHost}:${address.port}/`,
    async close(): Promise<void> {
      if (closing) return;
      closing = true;
      for (const res of [...streams]) res.end();
      streams.clear();
      for (const feed of [...planFeeds.values()]) feed.close();
      planFeeds.clear();
      plansFeed?.close();
      plansFeed = undefined;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
    },
  };
}
