/**
 * `/plans.js`: the plans page. One row per plan (state, priority, progress, counts) from the
 * plans stream; below it the live workers, the concurrency limits, the schedules and the jobs
 * with each worker's items, read again every 5 s.
 */
import type { UiCluster, UiPlanRow } from '../ui-wire.js';
import { actionToken, getJson, subscribe } from './api.js';
import { renderCluster } from './cluster-view.js';
import { byId, cell, h, percentDone, progressBar } from './dom.js';

/** Workers rewrite their record at least this often (src/registry/worker-info.ts): the section is read again as often. */
const CLUSTER_REFRESH_MS = 5_000;

const parent = document.body.dataset['parent'] ?? '';
const tbody = byId('plans');
const empty = byId('empty');
const live = byId('live');
actionToken(); // keeps a token from the URL for the plan pages' buttons

function planRow(plan: UiPlanRow): HTMLTableRowElement {
  const row = h('tr');
  row.dataset['plan'] = plan.plan;
  row.dataset['state'] = plan.state;
  const link = h('a', plan.name);
  link.href = `/plan?path=${encodeURIComponent(plan.plan)}`;
  cell(row).appendChild(link);
  cell(row, plan.planName ?? '', 'plan-name');
  const badge = h('span', plan.state, 'badge');
  badge.dataset['state'] = plan.state;
  cell(row).appendChild(badge);
  cell(row, String(plan.priority), 'num');
  const label = plan.historyKept
    ? `${plan.done}/${plan.total} done`
    : `${plan.total - plan.done} left (no history)`;
  cell(row, undefined, 'progress-cell').appendChild(
    progressBar(percentDone(plan.done, plan.total, plan.state), label),
  );
  for (const count of [plan.running, plan.waiting, plan.failed, plan.blocked])
    cell(row, String(count), 'num');
  return row;
}

function render(plans: readonly UiPlanRow[]): void {
  const fragment = document.createDocumentFragment();
  for (const plan of plans) fragment.appendChild(planRow(plan));
  tbody.textContent = '';
  tbody.appendChild(fragment);
  empty.textContent = plans.length === 0 ? `No plans under ${parent} yet.` : '';
}

subscribe(
  '/api/plans/events',
  {
    plans: (data) => render(data as UiPlanRow[]),
    problem: (data) => {
      live.textContent = `ZooKeeper: ${(data as { message: string }).message}`;
    },
  },
  live,
);

const tables = {
  workers: byId('workers'),
  limits: byId('limits'),
  schedules: byId('schedules'),
  jobs: byId('jobs'),
  jobAssignment: byId('job-assignment'),
  jobRuns: byId('job-runs'),
  jobRunsEmpty: byId('job-runs-empty'),
  workersEmpty: byId('workers-empty'),
  limitsEmpty: byId('limits-empty'),
  schedulesEmpty: byId('schedules-empty'),
  jobsEmpty: byId('jobs-empty'),
};
const clusterNote = byId('cluster-note');
async function refreshCluster(): Promise<void> {
  try {
    renderCluster(await getJson<UiCluster>('/api/cluster'), tables);
    clusterNote.textContent = '';
  } catch (error) {
    clusterNote.textContent = `Could not read the cluster: ${error instanceof Error ? error.message : String(error)}`;
  } finally {
    setTimeout(() => void refreshCluster(), CLUSTER_REFRESH_MS);
  }
}
void refreshCluster();
