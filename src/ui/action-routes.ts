/**
 * The web view's routes of actions: POST requests, let through by ui-actions.ts `authorize`, read
 * into what they act on and performed there; and `GET /api/actions`, which tells the pages whether
 * and how they may take actions. Their errors are always JSON.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { PlanCancelledError } from '../errors/plan-errors.js';
import { ScheduleNotFoundError } from '../errors/schedule-errors.js';
import { SnapshotError } from '../errors/snapshot-errors.js';
import { assertScheduleName } from '../schedule/schedule-name.js';
import { HttpError, statusOf } from './http-rules.js';
import { requirePath, sendJson } from './http-answers.js';
import {
  authorize,
  performAction,
  type ActionsAccess,
  type UiAction,
  type UiActionRequest,
} from './ui-actions.js';
import { isPlanUnder, isTaskUnder } from './ui-model.js';
import type { UiContext, UiRoute } from './ui-context.js';
import type { UiActionsInfo } from './ui-wire.js';

/**
 * POST /api/actions/<action>: `?path=<plan>` (pause, resume, retry; cancel with `&reason=…`),
 * `?path=<task>` (rerun), `?schedule=<name>` (trigger, when the view lists schedules).
 */
export async function handleAction(
  ctx: UiContext,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  action: UiAction,
): Promise<void> {
  try {
    if (req.method !== 'POST')
      throw new HttpError(
        405,
        'METHOD_NOT_ALLOWED',
        'actions are POST requests: a GET never changes anything',
      );
    authorize(req, ctx.actions);
    sendJson(res, 200, await performAction(ctx.zkPlan, actionRequest(ctx, url, action)));
  } catch (error) {
    const { status, code, message } = statusOf(error);
    sendJson(res, conflictStatus(error) ?? status, { error: { code, message } });
  }
}

/** What the action acts on, from the request's query: only plans, tasks and schedules the view serves. */
function actionRequest(ctx: UiContext, url: URL, action: UiAction): UiActionRequest {
  switch (action) {
    case 'pause':
    case 'resume':
    case 'retry':
      return { action, plan: requirePlan(ctx, url) };
    case 'cancel':
      return {
        action,
        plan: requirePlan(ctx, url),
        reason: url.searchParams.get('reason') ?? undefined,
      };
    case 'rerun':
      return {
        action,
        task: requirePath(url, ctx.parent, (path) => isTaskUnder(ctx.parent, path), 'task'),
      };
    case 'trigger': {
      if (ctx.schedules === undefined)
        throw new HttpError(
          400,
          'NO_SCHEDULES',
          'this view lists no schedules: start it with zk-plan ui <parent> --schedules <path>',
        );
      const schedule = url.searchParams.get('schedule') ?? '';
      assertScheduleName(schedule);
      return { action, schedules: ctx.schedules, schedule };
    }
  }
}

function requirePlan(ctx: UiContext, url: URL): string {
  return requirePath(url, ctx.parent, (path) => isPlanUnder(ctx.parent, path), 'plan');
}

/** The status of an error that says the action does not fit what it acts on (statusOf answers the rest). */
function conflictStatus(error: unknown): number | undefined {
  if (error instanceof PlanCancelledError || error instanceof SnapshotError) return 409;
  if (error instanceof ScheduleNotFoundError) return 404;
  return undefined;
}

/** `GET /api/actions`: whether the pages may take actions, and how to enable them when not. */
export const ACTION_ROUTES: Readonly<Record<string, UiRoute>> = {
  '/api/actions': (ctx, _req, res) => {
    sendJson(res, 200, actionsInfo(ctx.actions, ctx.enableActionsCommand));
  },
};

function actionsInfo(access: ActionsAccess, enableCommand: string): UiActionsInfo {
  switch (access.mode) {
    case 'same-origin':
      return {
        mode: 'same-origin',
        origins: access.served.map((authority) => `http://${authority}`),
        enable: `${enableCommand} --allow-actions`,
      };
    case 'token':
      return { mode: 'token', origins: [], enable: `${enableCommand} --allow-actions` };
    case 'off':
      return { mode: 'off', origins: [], enable: enableCommand };
  }
}
