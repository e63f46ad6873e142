/**
 * The web view's route of the cluster: the live workers, limits, schedules and jobs (read by
 * ui-cluster.ts), polled by the cluster and jobs pages.
 */
import { sendJson } from './http-answers.js';
import { readCluster } from './ui-cluster.js';
import type { UiRoute } from './ui-context.js';

export const CLUSTER_ROUTES: Readonly<Record<string, UiRoute>> = {
  '/api/cluster': async (ctx, _req, res) => {
    sendJson(
      res,
      200,
      await readCluster(
        ctx.zkPlan,
        ctx.parent,
        ctx.actions.mode !== 'off',
        ctx.schedules,
        ctx.jobs,
      ),
    );
  },
};
