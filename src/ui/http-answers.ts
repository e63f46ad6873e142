/**
 * How the web view answers a request: the body with its type and length, the security headers,
 * and the error page of a request for a page (an API request gets its error as JSON).
 */
import type { ServerResponse } from 'node:http';
import { HTML_CSP, HttpError, SECURITY_HEADERS } from './http-rules.js';
import { escapeHtml, stringifySafe } from './ui-model.js';

/** Answers with a whole body; a HEAD request gets the same headers and no body. */
export function send(
  res: ServerResponse,
  status: number,
  type: string,
  body: string | Buffer,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, {
    ...SECURITY_HEADERS,
    'Content-Type': type,
    'Content-Length': String(Buffer.byteLength(body)),
    'Cache-Control': 'no-cache',
    ...headers,
  });
  res.end(res.req.method === 'HEAD' ? undefined : body);
}

export function sendJson(res: ServerResponse, status: number, value: unknown): void {
  send(res, status, 'application/json; charset=utf-8', stringifySafe(value));
}

export function sendHtml(res: ServerResponse, status: number, html: string): void {
  send(res, status, 'text/html; charset=utf-8', html, { 'Content-Security-Policy': HTML_CSP });
}

/** The page shown for a page request that failed. */
export function errorPage(status: number, message: string): string {
  return (
    `<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>${status} · zk-plan</title><link rel="stylesheet" href="/ui.css"></head>` +
    `<body><header><a href="/">Plans</a></header><p class="empty">${escapeHtml(message)}</p></body></html>\n`
  );
}

/**
 * The request's `?path=`, which `check` must accept (a plan or a task under `parent`): nothing
 * outside the parent is served.
 */
export function requirePath(
  url: URL,
  parent: string,
  check: (path: string) => boolean,
  what: string,
): string {
  const path = url.searchParams.get('path');
  if (path === null || path === '')
    throw new HttpError(400, 'INVALID_ARGUMENT', `missing ?path= (the ${what}'s znode path)`);
  if (!check(path))
    throw new HttpError(400, 'INVALID_ARGUMENT', `${path} is not a ${what} under ${parent}`);
  return path;
}
