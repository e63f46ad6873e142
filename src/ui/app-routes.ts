/**
 * The web view's pages besides the plans and a plan (plan-routes.ts): workflows, cluster,
 * schedules and jobs, each one HTML shell whose script reads the API; and `/api/schedules`, the
 * schedules alone (the schedules and workflows pages need nothing else of `/api/cluster`).
 */
import { sendHtml, sendJson } from './http-answers.js';
import {
  clusterPageHtml,
  jobsPageHtml,
  schedulesPageHtml,
  workflowsPageHtml,
} from './page-html.js';
import { readSchedules } from './ui-cluster.js';
import type { UiRoute } from './ui-context.js';

export const APP_ROUTES: Readonly<Record<string, UiRoute>> = {
  '/workflows': (ctx, _req, res) => {
    sendHtml(res, 200, workflowsPageHtml(ctx.parent));
  },
  '/cluster': (ctx, _req, res) => {
    sendHtml(res, 200, clusterPageHtml(ctx.parent));
  },
  '/schedules': (ctx, _req, res) => {
    sendHtml(res, 200, schedulesPageHtml(ctx.parent));
  },
  '/jobs': (ctx, _req, res) => {
    sendHtml(res, 200, jobsPageHtml(ctx.parent));
  },
  '/api/schedules': async (ctx, _req, res) => {
    sendJson(res, 200, await readSchedules(ctx.zkPlan, ctx.parent, ctx.schedules));
  },
};
