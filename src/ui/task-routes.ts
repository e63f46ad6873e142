/**
 * The web view's routes of tasks: a task's detail (with its result when it is kept), its log as
 * data or as a file to download, and why it has not run.
 */
import { ResultNotFoundError } from '../errors/plan-errors.js';
import { taskLogText } from '../logs/log-text.js';
import type { PlanView } from '../plan/plan-view.js';
import { nameOf, parentOf } from '../zk/layout.js';
import { HttpError } from './http-rules.js';
import { requirePath, send, sendJson } from './http-answers.js';
import { formatValue, goneTaskDetail, isTaskUnder, taskDetail } from './ui-model.js';
import type { UiTaskDetail } from './ui-wire.js';
import type { UiContext, UiRoute } from './ui-context.js';

/** How old a plan feed's view may be to answer a task's detail without reading the plan again. */
const TASK_VIEW_FRESH_MS = 2_000;

export const TASK_ROUTES: Readonly<Record<string, UiRoute>> = {
  '/api/task': async (ctx, _req, res, url) => {
    sendJson(
      res,
      200,
      await apiTask(
        ctx,
        requirePath(url, ctx.parent, (path) => isTaskUnder(ctx.parent, path), 'task'),
      ),
    );
  },
  '/api/task-log': async (ctx, _req, res, url) => {
    sendJson(
      res,
      200,
      await ctx.zkPlan.logs.read(
        requirePath(url, ctx.parent, (path) => isTaskUnder(ctx.parent, path), 'task'),
      ),
    );
  },
  '/api/task-log.txt': async (ctx, _req, res, url) => {
    const task = requirePath(url, ctx.parent, (path) => isTaskUnder(ctx.parent, path), 'task');
    const fileName = `${nameOf(parentOf(task))}-${nameOf(task)}.log`;
    send(res, 200, 'text/plain; charset=utf-8', taskLogText(await ctx.zkPlan.logs.read(task)), {
      'Content-Disposition': `attachment; filename="${fileName}"`,
    });
  },
  '/api/why': async (ctx, _req, res, url) => {
    sendJson(
      res,
      200,
      await ctx.zkPlan.explain.task(
        requirePath(url, ctx.parent, (path) => isTaskUnder(ctx.parent, path), 'task'),
      ),
    );
  },
};

/**
 * A task's detail, from its plan feed's view when that is fresh (else read), with its result
 * when it is kept, or why it is not shown.
 */
async function apiTask(ctx: UiContext, task: string): Promise<UiTaskDetail> {
  const plan = parentOf(task);
  const cached = ctx.feeds.latest(plan);
  let view: PlanView | undefined =
    cached !== undefined && Date.now() - cached.at < TASK_VIEW_FRESH_MS ? cached.view : undefined;
  let found = view?.tasks.find((entry) => entry.task === task);
  if (found === undefined) {
    view = await ctx.zkPlan.plans.describe(plan);
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
      return { ...detail, result: { value: formatValue(await ctx.zkPlan.getResult(task)) } };
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
}
