/**
 * The web view's write actions (pause, resume, cancel, retry of a plan), available only when the
 * view is started with a token (`zk-plan ui --allow-actions`). A request must carry it as
 * `Authorization: Bearer <token>`: a page of another site can neither read the token nor set that
 * header on a cross-origin request without a CORS grant, which the view never gives, and the
 * Host check already refuses DNS rebinding. The token is compared in constant time.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { ZkPlan } from '../zk-plan.js';
import { HttpError } from './http-rules.js';

export const ACTIONS = ['pause', 'resume', 'cancel', 'retry'] as const;

/** The shortest actions token accepted: a guessable one would let any local program or page steer plans. */
export const MIN_ACTIONS_TOKEN_LENGTH = 16;
export type UiAction = (typeof ACTIONS)[number];

/** The action a path names (`/api/actions/pause` → `pause`), else undefined. */
export function actionOf(pathname: string): UiAction | undefined {
  const name = pathname.startsWith('/api/actions/')
    ? pathname.slice('/api/actions/'.length)
    : undefined;
  return ACTIONS.find((action) => action === name);
}

/**
 * Checks the request's bearer token against the view's (none configured: actions are off), and
 * that a browser sent it from the view's own pages: a request whose `Origin` is another site's is
 * refused whatever it carries.
 */
export function authorize(req: IncomingMessage, token: string | undefined): void {
  if (token === undefined)
    throw new HttpError(
      403,
      'ACTIONS_DISABLED',
      'the web view is read-only: start it with --allow-actions (a bearer token) to pause, resume, cancel or retry',
    );
  const origin = req.headers.origin;
  if (origin !== undefined && origin !== `http://${req.headers.host ?? ''}`)
    throw new HttpError(
      403,
      'CROSS_ORIGIN',
      `actions are taken from the view's own pages only, not from ${origin}`,
    );
  const header = req.headers.authorization ?? '';
  const given = header.startsWith('Bearer ') ? header.slice('Bearer '.length) : '';
  // Hashes first: equal lengths for timingSafeEqual, and nothing about the token's length leaks.
  if (!timingSafeEqual(digest(given), digest(token)))
    throw new HttpError(401, 'UNAUTHORIZED', 'missing or wrong bearer token');
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

/** Performs an action on a plan; resolves what the view answers. */
export async function performAction(
  zkPlan: ZkPlan,
  action: UiAction,
  plan: string,
  reason: string | undefined,
): Promise<Record<string, unknown>> {
  switch (action) {
    case 'pause': {
      const { running } = await zkPlan.control.pause(plan);
      return { plan, state: 'paused', running };
    }
    case 'resume':
      await zkPlan.control.resume(plan);
      return { plan, state: 'running' };
    case 'cancel':
      await zkPlan.control.cancel(plan, reason !== undefined ? { reason } : {});
      return { plan, state: 'cancelled' };
    case 'retry':
      return { plan, reset: await zkPlan.control.retryFailed(plan) };
  }
}
