/**
 * The web view's routes of plans: the plans page and a plan's page, their data (the plans under
 * the parent, a plan's view), and their live event streams.
 */
import { PlanNotFoundError } from '../errors/plan-errors.js';
import { HISTORY, childPath } from '../zk/layout.js';
import { HttpError } from './http-rules.js';
import { requirePath, sendHtml, sendJson } from './http-answers.js';
import { openStream } from './event-stream.js';
import { planPageHtml, plansPageHtml } from './page-html.js';
import type { PlanFeedMessage, PlansFeedMessage } from './plan-feed.js';
import { isPlanUnder, planRow } from './ui-model.js';
import type { UiContext, UiRoute } from './ui-context.js';

export const PLAN_ROUTES: Readonly<Record<string, UiRoute>> = {
  '/': (ctx, _req, res) => {
    sendHtml(res, 200, plansPageHtml(ctx.parent));
  },
  '/plan': (ctx, _req, res, url) => {
    sendHtml(
      res,
      200,
      planPageHtml(
        requirePath(url, ctx.parent, (path) => isPlanUnder(ctx.parent, path), 'plan'),
        ctx.actions.mode !== 'off',
      ),
    );
  },
  '/api/plans': async (ctx, _req, res) => {
    sendJson(res, 200, await apiPlans(ctx));
  },
  '/api/plan': async (ctx, _req, res, url) => {
    sendJson(
      res,
      200,
      await ctx.zkPlan.plans.describe(
        requirePath(url, ctx.parent, (path) => isPlanUnder(ctx.parent, path), 'plan'),
      ),
    );
  },
  '/api/events': (ctx, req, res, url) => {
    const plan = requirePath(url, ctx.parent, (path) => isPlanUnder(ctx.parent, path), 'plan');
    if (ctx.feeds.closing) throw new HttpError(503, 'CLOSING', 'the web view is closing');
    openStream<PlanFeedMessage>(req, res, ctx.feeds.streams, (listener) =>
      ctx.feeds.planFeed(plan).subscribe(listener),
    );
  },
  '/api/plans/events': (ctx, req, res) => {
    if (ctx.feeds.closing) throw new HttpError(503, 'CLOSING', 'the web view is closing');
    openStream<PlansFeedMessage>(req, res, ctx.feeds.streams, (listener) =>
      ctx.feeds.listPlansFeed().subscribe(listener),
    );
  },
};

/** The plans under the parent, as rows of the plans page; none when the parent does not exist. */
async function apiPlans(ctx: UiContext): Promise<unknown> {
  let summaries;
  try {
    summaries = await ctx.zkPlan.plans.list(ctx.parent);
  } catch (error) {
    if (error instanceof PlanNotFoundError) return [];
    throw error;
  }
  const kept = await Promise.all(
    summaries.map(async (summary) => summary.historyKept ?? (await historyKept(ctx, summary.plan))),
  );
  return summaries.map((summary, index) => ({
    ...planRow(summary, kept[index] === true),
    status: summary.status,
  }));
}

async function historyKept(ctx: UiContext, plan: string): Promise<boolean> {
  return (await ctx.zkPlan.zk.exists(childPath(plan, HISTORY))) !== undefined;
}
