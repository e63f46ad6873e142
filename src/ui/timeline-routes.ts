/**
 * The web view's timeline route: every try of a plan's tasks (`GET /api/timeline?path=<plan>`).
 * The page asks at most about once a second while its timeline is shown, after a snapshot or a
 * diff of its plan's feed.
 */
import type { PlanView } from '../plan/plan-view.js';
import { requirePath, sendJson } from './http-answers.js';
import { isPlanUnder } from './ui-model.js';
import { buildTimeline } from './ui-timeline.js';
import type { UiContext, UiRoute } from './ui-context.js';

export const TIMELINE_ROUTES: Readonly<Record<string, UiRoute>> = {
  '/api/timeline': async (ctx, _req, res, url) => {
    const plan = requirePath(url, ctx.parent, (path) => isPlanUnder(ctx.parent, path), 'plan');
    const view = await viewOf(ctx, plan);
    sendJson(res, 200, buildTimeline(view, Date.now()));
  },
};

/**
 * The view the plan's feed read last, when a page follows the plan: the one its snapshot and
 * diffs come from (the feed reads the plan again on every change its watches see, and sends the
 * diff right after), so the tries agree with the nodes the page draws, and a plan of thousands of
 * tasks is not read again for them. Without a feed, the plan is read.
 */
async function viewOf(ctx: UiContext, plan: string): Promise<PlanView> {
  return ctx.feeds.latest(plan)?.view ?? (await ctx.zkPlan.plans.describe(plan));
}
