/**
 * `/plans.js`: the plans page. One row per plan from the plans stream: its node, its name (linked
 * to its workflow), state, when it started and finished, how long it took, progress and counts;
 * the newest first.
 */
import type { UiPlanRow } from '../ui-wire.js';
import { actionToken, subscribe } from './api.js';
import { byId, cell, h, percentDone, planTaskHref, progressBar } from './dom.js';
import { rerenderOnTime } from './list-page.js';
import { durationText, timeElement } from './time-view.js';
import { preferredZone } from './time-zone.js';
import { newestFirst, workflowHref } from './workflows.js';

const parent = document.body.dataset['parent'] ?? '';
const tbody = byId('plans');
const empty = byId('empty');
const live = byId('live');
actionToken(); // keeps a token from the URL for the plan pages' buttons

function planRow(plan: UiPlanRow, now: number, zone: string): HTMLTableRowElement {
  const row = h('tr');
  row.dataset['plan'] = plan.plan;
  row.dataset['state'] = plan.state;
  const link = h('a', plan.name);
  link.href = planTaskHref(plan.plan);
  cell(row, undefined, 'mono').appendChild(link);
  const name = cell(row, undefined, 'plan-name');
  if (plan.planName !== undefined) {
    const workflow = h('a', plan.planName);
    workflow.href = workflowHref(plan.planName);
    workflow.title = `every run of ${plan.planName}`;
    name.appendChild(workflow);
  }
  const badge = h('span', plan.state, 'badge');
  badge.dataset['state'] = plan.state;
  cell(row).appendChild(badge);
  cell(row, undefined, 'started').appendChild(timeElement(plan.createdAt, now, zone));
  cell(row, undefined, 'finished').appendChild(timeElement(plan.finishedAt, now, zone));
  cell(
    row,
    durationText(plan.createdAt, plan.finishedAt, plan.state === 'running', now),
    'duration',
  );
  const label = plan.historyKept
    ? `${plan.done}/${plan.total} done`
    : `${plan.total - plan.done} left (no history)`;
  cell(row, undefined, 'progress-cell').appendChild(
    progressBar(percentDone(plan.done, plan.total, plan.state), label),
  );
  cell(row, String(plan.failed), 'num failed');
  cell(row, tasksNow(plan), 'tasks-now');
  cell(row, String(plan.priority), 'num priority');
  return row;
}

/** `2 running · 3 waiting · 1 blocked`, the counts that are not zero; `—` when none is. */
function tasksNow(plan: UiPlanRow): string {
  const counts = [
    [plan.running, 'running'],
    [plan.waiting, 'waiting'],
    [plan.blocked, 'blocked'],
  ] as const;
  const shown = counts.filter(([count]) => count > 0).map(([count, label]) => `${count} ${label}`);
  return shown.length === 0 ? '—' : shown.join(' · ');
}

let latest: readonly UiPlanRow[] | undefined;

function render(): void {
  if (latest === undefined) return;
  const now = Date.now();
  const zone = preferredZone();
  const fragment = document.createDocumentFragment();
  for (const plan of [...latest].sort(newestFirst)) fragment.appendChild(planRow(plan, now, zone));
  tbody.textContent = '';
  tbody.appendChild(fragment);
  empty.textContent = latest.length === 0 ? `No plans under ${parent} yet.` : '';
}

subscribe(
  '/api/plans/events',
  {
    plans: (data) => {
      latest = data as UiPlanRow[];
      render();
    },
    problem: (data) => {
      live.textContent = `ZooKeeper: ${(data as { message: string }).message}`;
    },
  },
  live,
);
rerenderOnTime(render);
