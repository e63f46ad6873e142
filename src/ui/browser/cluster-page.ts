/**
 * `/cluster.js`: the cluster page. The live worker processes (worker pools and job workers) and
 * the concurrency limits with their holders, read from `/api/cluster` every 5 s.
 */
import type { UiCluster } from '../ui-wire.js';
import { renderCluster } from './cluster-view.js';
import { byId } from './dom.js';
import { pollJson, rerenderOnTime } from './list-page.js';

const tables = {
  workers: byId('workers'),
  limits: byId('limits'),
  workersEmpty: byId('workers-empty'),
  limitsEmpty: byId('limits-empty'),
};
let latest: UiCluster | undefined;

function render(): void {
  if (latest !== undefined) renderCluster(latest, tables);
}

pollJson<UiCluster>(
  '/api/cluster',
  (cluster) => {
    latest = cluster;
    render();
  },
  { note: byId('cluster-note'), live: byId('live') },
);
rerenderOnTime(render);
