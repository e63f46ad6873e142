/**
 * The web view's routes of actions: pause, resume, cancel and retry of a plan, for requests
 * carrying the bearer token (performed by ui-actions.ts). Their errors are always JSON.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { PlanCancelledError } from '../errors/plan-errors.js';
import { HttpError, statusOf } from './http-rules.js';
import { requirePath, sendJson } from './http-answers.js';
import { authorize, performAction, type UiAction } from './ui-actions.js';
import { isPlanUnder } from './ui-model.js';
import type { UiContext } from './ui-context.js';

/** POST /api/actions/<action>?path=<plan>[&reason=…] with the bearer token. */
export async function handleAction(
  ctx: UiContext,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  action: UiAction,
): Promise<void> {
  try {
    if (req.method !== 'POST')
      throw new HttpError(405, 'METHOD_NOT_ALLOWED', 'actions are POST requests');
    authorize(req, ctx.actionsToken);
    const plan = requirePath(url, ctx.parent, (path) => isPlanUnder(ctx.parent, path), 'plan');
    sendJson(
      res,
      200,
      await performAction(ctx.zkPlan, action, plan, url.searchParams.get('reason') ?? undefined),
    );
  } catch (error) {
    const { status, code, message } = statusOf(error);
    sendJson(res, error instanceof PlanCancelledError ? 409 : status, {
      error: { code, message },
    });
  }
}
