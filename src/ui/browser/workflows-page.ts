/**
 * `/workflows.js`: the workflows page. The plans of the plans stream grouped by name (workflows.ts),
 * one row per workflow with its last run and success rate; `?name=<workflow>` opens its runs, newest
 * first, filtered by state, start day (`from`, `to`) or backfill (`backfill`), all kept in the
 * address so that a filtered page can be linked. A workflow made by a schedule shows the schedule
 * and its backfills (`/api/schedules`, read every 10 s).
 */
import type { UiPlanRow, UiSchedule, UiSchedules } from '../ui-wire.js';
import { subscribe } from './api.js';
import { byId, cell, h, percentDone, planTaskHref, progressBar } from './dom.js';
import { linkedName, markLinked, pollJson, rerenderOnTime } from './list-page.js';
import { backfillLine } from './schedules-view.js';
import { formatAbsolute, formatRelative, isoMs } from './time-format.js';
import { durationText, timeElement } from './time-view.js';
import { preferredZone } from './time-zone.js';
import {
  filterQuery,
  filterRuns,
  groupWorkflows,
  parseRunFilter,
  workflowHref,
  type RunFilter,
  type Workflow,
} from './workflows.js';

/** Schedules change seldom; their runs show in the plans stream at once. */
const SCHEDULES_REFRESH_MS = 10_000;

const parent = document.body.dataset['parent'] ?? '';
const live = byId('live');
const workflowsBody = byId('workflows');
const workflowsEmpty = byId('workflows-empty');
const section = byId('workflow');
const title = byId('workflow-title');
const scheduleBox = byId('workflow-schedule');
const runsBody = byId('runs');
const runsEmpty = byId('runs-empty');
const stateSelect = byId<HTMLSelectElement>('filter-state');
const fromInput = byId<HTMLInputElement>('filter-from');
const toInput = byId<HTMLInputElement>('filter-to');
const filterNote = byId('filter-note');

const selected = linkedName();
let filter: RunFilter = parseRunFilter(new URLSearchParams(location.search));
let plans: readonly UiPlanRow[] | undefined;
let schedules: readonly UiSchedule[] = [];
const scrolled = { done: false };

function badge(state: string): HTMLElement {
  const element = h('span', state, 'badge');
  element.dataset['state'] = state;
  return element;
}

function workflowRow(workflow: Workflow, now: number, zone: string): HTMLTableRowElement {
  const row = h('tr');
  row.dataset['workflow'] = workflow.name;
  const link = h('a', workflow.name);
  link.setAttribute('href', workflowHref(workflow.name));
  cell(row, undefined, 'plan-name').appendChild(link);
  cell(row).appendChild(timeElement(workflow.last.createdAt, now, zone));
  cell(row).appendChild(badge(workflow.last.state));
  cell(row, String(workflow.runs.length), 'num');
  cell(
    row,
    workflow.successRate === undefined ? '—' : `${Math.round(workflow.successRate * 100)} %`,
    'num success-rate',
  ).title = `${workflow.completed} of ${workflow.ended} ended run(s) completed`;
  cell(row, String(workflow.failed), 'num');
  cell(row, String(workflow.running), 'num');
  const schedule = cell(row);
  if (schedules.some((candidate) => candidate.name === workflow.name)) {
    const scheduleLink = h('a', 'schedule');
    scheduleLink.setAttribute('href', `/schedules?${new URLSearchParams({ name: workflow.name })}`);
    schedule.appendChild(scheduleLink);
  }
  return row;
}

function runRow(run: UiPlanRow, now: number, zone: string): HTMLTableRowElement {
  const row = h('tr');
  row.dataset['plan'] = run.plan;
  row.dataset['state'] = run.state;
  const link = h('a', run.name, 'plan-link');
  link.setAttribute('href', planTaskHref(run.plan));
  cell(row, undefined, 'mono').appendChild(link);
  cell(row).appendChild(badge(run.state));
  cell(row, undefined, 'started').appendChild(timeElement(run.createdAt, now, zone));
  cell(row, undefined, 'finished').appendChild(timeElement(run.finishedAt, now, zone));
  cell(row, durationText(run.createdAt, run.finishedAt, run.state === 'running', now), 'duration');
  cell(row, String(run.failed), 'num failed');
  const label = run.historyKept
    ? `${run.done}/${run.total} done`
    : `${run.total - run.done} left (no history)`;
  cell(row, undefined, 'progress-cell').appendChild(
    progressBar(percentDone(run.done, run.total, run.state), label),
  );
  return row;
}

/** The schedule that makes the workflow's runs, with its backfills, above the runs. */
function renderSchedule(name: string, now: number, zone: string): void {
  const schedule = schedules.find((candidate) => candidate.name === name);
  scheduleBox.textContent = '';
  scheduleBox.hidden = schedule === undefined;
  if (schedule === undefined) return;
  const line = h('div');
  line.appendChild(h('b', 'Schedule '));
  const link = h('a', schedule.name, 'mono');
  link.setAttribute('href', `/schedules?${new URLSearchParams({ name: schedule.name })}`);
  line.appendChild(link);
  const next = isoMs(schedule.nextFireTimes[0]);
  line.appendChild(
    h(
      'span',
      ` · ${schedule.cron} (${schedule.timezone})${schedule.paused ? ' · paused' : ''}${next === undefined ? '' : ` · next ${formatRelative(next, now)} (${formatAbsolute(next, zone)})`}`,
      'meta',
    ),
  );
  scheduleBox.appendChild(line);
  if (schedule.backfills.length === 0) return;
  scheduleBox.appendChild(h('div', 'Backfills (each link shows the runs of its ticks):', 'meta'));
  for (const backfill of schedule.backfills)
    scheduleBox.appendChild(backfillLine(schedule.name, backfill, zone));
}

function renderRuns(workflow: Workflow | undefined, name: string, now: number, zone: string): void {
  section.hidden = false;
  title.textContent = `Runs of ${name}`;
  renderSchedule(name, now, zone);
  const backfills = schedules.find((candidate) => candidate.name === name)?.backfills ?? [];
  const runs = filterRuns(workflow?.runs ?? [], filter, zone, backfills);
  const fragment = document.createDocumentFragment();
  for (const run of runs) fragment.appendChild(runRow(run, now, zone));
  runsBody.textContent = '';
  runsBody.appendChild(fragment);
  filterNote.textContent =
    workflow === undefined
      ? ''
      : `${runs.length} of ${workflow.runs.length} run(s)${filter.backfill === undefined ? '' : ` · backfill ${filter.backfill}`}`;
  runsEmpty.textContent =
    workflow === undefined
      ? `No plan named ${name} under ${parent}.`
      : runs.length === 0
        ? 'No run matches the filter.'
        : '';
}

function render(): void {
  if (plans === undefined) return;
  const now = Date.now();
  const zone = preferredZone();
  const { workflows, unnamed } = groupWorkflows(plans);
  const fragment = document.createDocumentFragment();
  for (const workflow of workflows) fragment.appendChild(workflowRow(workflow, now, zone));
  workflowsBody.textContent = '';
  workflowsBody.appendChild(fragment);
  const unnamedNote =
    unnamed === 0 ? '' : `${unnamed} plan(s) without a name are on the Plans page only.`;
  workflowsEmpty.textContent =
    workflows.length === 0
      ? `No named plan under ${parent} yet (createPlan(parent, { name }), a spec's name, a schedule's). ${unnamedNote}`
      : unnamedNote;
  if (selected === undefined) return;
  markLinked(workflowsBody, 'workflow', selected, scrolled);
  renderRuns(
    workflows.find((workflow) => workflow.name === selected),
    selected,
    now,
    zone,
  );
}

/** Takes the filter from the form, keeps it in the address, and shows the runs again. */
function applyForm(): void {
  const query = new URLSearchParams();
  if (stateSelect.value !== 'all') query.set('state', stateSelect.value);
  if (fromInput.value !== '') query.set('from', fromInput.value);
  if (toInput.value !== '') query.set('to', toInput.value);
  if (filter.backfill !== undefined) query.set('backfill', filter.backfill);
  filter = parseRunFilter(query);
  if (selected !== undefined)
    history.replaceState(null, '', `/workflows?${filterQuery(selected, filter)}`);
  render();
}

stateSelect.value = filter.state ?? 'all';
fromInput.value = filter.from ?? '';
toInput.value = filter.to ?? '';
for (const control of [stateSelect, fromInput, toInput])
  control.addEventListener('change', applyForm);
byId('filter-clear').addEventListener('click', () => {
  stateSelect.value = 'all';
  fromInput.value = '';
  toInput.value = '';
  filter = {};
  applyForm();
});

subscribe(
  '/api/plans/events',
  {
    plans: (data) => {
      plans = data as UiPlanRow[];
      render();
    },
    problem: (data) => {
      live.textContent = `ZooKeeper: ${(data as { message: string }).message}`;
    },
  },
  live,
);
pollJson<UiSchedules>(
  '/api/schedules',
  (answer) => {
    schedules = answer.schedules;
    render();
  },
  // The plans stream owns the live indicator.
  { note: byId('schedules-note'), intervalMs: SCHEDULES_REFRESH_MS },
);
rerenderOnTime(render);
