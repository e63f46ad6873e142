/**
 * The web view's write actions: pause, resume, cancel and retry a plan, rerun a plan from one of
 * its tasks, and trigger a schedule. Who may take them (`ActionsAccess`):
 *
 * - `same-origin` (the default, the view being on loopback): a request from the view's own pages,
 *   as action-guard.ts decides from its `Host`, `Origin` and body type. No other site's page can
 *   make one, nor a page that reaches the port through a rebound name.
 * - `token` (`zk-plan ui --allow-actions`): a request carrying `Authorization: Bearer <token>`,
 *   for a machine shared with other users or a view reached through a tunnel. A page of another
 *   site can neither read the token nor set that header on a cross-origin request without a CORS
 *   grant, which the view never gives; the Host check of every request refuses DNS rebinding. The
 *   token is compared in constant time.
 * - `off` (`zk-plan ui --read-only`): none.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { ZkPlan } from '../zk-plan.js';
import { parentOf } from '../zk/layout.js';
import { refuseFormBody, refuseForeignRequest } from './action-guard.js';
import { HttpError } from './http-rules.js';

/** The actions on a plan (`?path=<plan>`). */
export const PLAN_ACTIONS = ['pause', 'resume', 'cancel', 'retry'] as const;
/** Every action: the plan's, `rerun` from a task (`?path=<task>`), `trigger` of a schedule (`?schedule=<name>`). */
export const ACTIONS = [...PLAN_ACTIONS, 'rerun', 'trigger'] as const;

/** The shortest actions token accepted: a guessable one would let any local program or page steer plans. */
export const MIN_ACTIONS_TOKEN_LENGTH = 16;
export type UiAction = (typeof ACTIONS)[number];
export type UiPlanAction = (typeof PLAN_ACTIONS)[number];

/** Who may take the view's actions (see the module's comment). */
export type ActionsAccess =
  | { readonly mode: 'same-origin'; readonly served: readonly string[] }
  | { readonly mode: 'token'; readonly token: string }
  | { readonly mode: 'off' };

/** One action with what it acts on, as action-routes.ts reads it off the request. */
export type UiActionRequest =
  | { readonly action: 'pause' | 'resume' | 'retry'; readonly plan: string }
  | { readonly action: 'cancel'; readonly plan: string; readonly reason: string | undefined }
  | { readonly action: 'rerun'; readonly task: string }
  | { readonly action: 'trigger'; readonly schedules: string; readonly schedule: string };

/** The action a path names (`/api/actions/pause` → `pause`), else undefined. */
export function actionOf(pathname: string): UiAction | undefined {
  const name = pathname.startsWith('/api/actions/')
    ? pathname.slice('/api/actions/'.length)
    : undefined;
  return ACTIONS.find((action) => action === name);
}

/**
 * Lets the request through when the view's access allows it, else throws the HttpError it is
 * answered with: 403 with a code for a read-only view and for a request from elsewhere, 401 for a
 * missing or wrong token.
 */
export function authorize(req: IncomingMessage, access: ActionsAccess): void {
  if (access.mode === 'off')
    throw new HttpError(
      403,
      'ACTIONS_DISABLED',
      'the web view was started read-only (--read-only): start it without --read-only to pause, resume, cancel, retry, rerun or trigger',
    );
  if (access.mode === 'same-origin') {
    const refusal = refuseForeignRequest(access.served, req.headers);
    if (refusal !== undefined) throw new HttpError(403, refusal.code, refusal.message);
    return;
  }
  // The token stands for the page: only a form's body and another site's Origin are refused besides.
  const formPost = refuseFormBody(req.headers['content-type']);
  if (formPost !== undefined) throw new HttpError(403, formPost.code, formPost.message);
  const origin = req.headers.origin;
  if (origin !== undefined && origin !== `http://${req.headers.host ?? ''}`)
    throw new HttpError(
      403,
      'CROSS_ORIGIN',
      `actions are taken from the view's own pages only, not from ${origin.slice(0, 200)}`,
    );
  const header = req.headers.authorization ?? '';
  const given = header.startsWith('Bearer ') ? header.slice('Bearer '.length) : '';
  // Hashes first: equal lengths for timingSafeEqual, and nothing about the token's length leaks.
  if (!timingSafeEqual(digest(given), digest(access.token)))
    throw new HttpError(
      401,
      'UNAUTHORIZED',
      'missing or wrong bearer token: open the URL zk-plan ui --allow-actions printed (it ends in #token=…)',
    );
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

/** Performs an action; resolves what the view answers. */
export async function performAction(
  zkPlan: ZkPlan,
  request: UiActionRequest,
): Promise<Record<string, unknown>> {
  switch (request.action) {
    case 'pause': {
      const { running } = await zkPlan.control.pause(request.plan);
      return { plan: request.plan, state: 'paused', running };
    }
    case 'resume':
      await zkPlan.control.resume(request.plan);
      return { plan: request.plan, state: 'running' };
    case 'cancel':
      await zkPlan.control.cancel(
        request.plan,
        request.reason !== undefined ? { reason: request.reason } : {},
      );
      return { plan: request.plan, state: 'cancelled' };
    case 'retry':
      return { plan: request.plan, reset: await zkPlan.control.retryFailed(request.plan) };
    case 'rerun':
      return rerunFrom(zkPlan, request.task);
    case 'trigger': {
      const fired = await zkPlan.schedules(request.schedules).trigger(request.schedule);
      return { schedule: request.schedule, tick: fired.tick, plan: fired.plan, state: fired.state };
    }
  }
}

/**
 * A new run of the task's plan from the task (snapshots.rerun with its key): it and its downstream
 * run again, the rest reuse their results. A task is named in a rerun by its key, so one without
 * a key (a plan built with addTask) cannot be rerun from; nor one keyed `failed`, which a rerun
 * reads as "every failed task".
 */
async function rerunFrom(zkPlan: ZkPlan, task: string): Promise<Record<string, unknown>> {
  const plan = parentOf(task);
  const found = (await zkPlan.plans.describe(plan)).tasks.find((entry) => entry.task === task);
  if (found === undefined)
    throw new HttpError(404, 'TASK_NOT_FOUND', `${task} is not a task of ${plan}`);
  if (found.key === undefined)
    throw new HttpError(
      409,
      'RERUN_NO_KEY',
      `${task} has no key, and a rerun starts from a task named by its key: a plan built with addTask has none (zk-plan export ${plan} > snap.json, zk-plan import, then rerun the copy)`,
    );
  if (found.key === 'failed')
    throw new HttpError(
      409,
      'RERUN_AMBIGUOUS_KEY',
      `${task} is keyed "failed", which a rerun reads as every failed task: zk-plan rerun ${plan} --from failed reruns those`,
    );
  const rerun = await zkPlan.snapshots.rerun(plan, { from: found.key });
  return { plan: rerun.plan, rerunOf: plan, from: found.key };
}
