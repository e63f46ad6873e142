/**
 * The web view's HTTP rules, apart from its routes: loopback only (and the Host check against DNS
 * rebinding), the security headers and Content-Security-Policy of every answer, and the status
 * and code each error is answered with.
 */
import { ZkPlanError } from '../errors/base-error.js';
import { PlanNotFoundError } from '../errors/plan-errors.js';
import { InvalidArgumentError } from '../errors/usage-errors.js';
import { isZkError } from '../errors/zk-error.js';

/** True for loopback addresses and `localhost`. */
export function isLoopbackHost(host: string): boolean {
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  return (
    bare === 'localhost' ||
    bare === '::1' ||
    /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(bare) ||
    bare === '::ffff:127.0.0.1'
  );
}

/** The host name of a Host header (`[::1]:8080` → `[::1]`, `localhost:80` → `localhost`). */
export function hostnameOf(header: string): string {
  if (header.startsWith('[')) return header.slice(0, header.indexOf(']') + 1);
  const colon = header.indexOf(':');
  return colon === -1 ? header : header.slice(0, colon);
}

export const SECURITY_HEADERS = {
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
  'Cross-Origin-Resource-Policy': 'same-origin',
};

export const HTML_CSP =
  "default-src 'none'; script-src 'self'; worker-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/** Content types of the browser assets (src/ui/ui-assets.ts), by extension. */
export const ASSET_TYPES: Readonly<Record<string, string>> = {
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
};

/** An error answered with a status and a JSON (or HTML) body. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export function statusOf(error: unknown): { status: number; code: string; message: string } {
  if (error instanceof HttpError)
    return { status: error.status, code: error.code, message: error.message };
  const message = error instanceof Error ? error.message : String(error);
  if (error instanceof PlanNotFoundError) return { status: 404, code: error.code, message };
  if (error instanceof InvalidArgumentError) return { status: 400, code: error.code, message };
  if (isZkError(error) && error.isConnectionProblem)
    return { status: 503, code: error.code, message };
  if (error instanceof ZkPlanError)
    return { status: error.code === 'ILLEGAL_STATE' ? 503 : 500, code: error.code, message };
  return { status: 500, code: 'INTERNAL', message };
}
