/**
 * The plans page's jobs section (`zk-plan ui --jobs <path>`): one row per job (function, mode,
 * strategy, enabled or not, why it could not be assigned, the items nobody got), and one row per
 * worker's share of a job, each item with the fencing token of the lease its worker holds.
 */
import type { UiJob, UiJobItem, UiJobShare } from '../ui-wire.js';
import { cell, h } from './dom.js';

/** At most this many items are listed in a cell; the rest are counted. */
const MAX_LISTED = 50;

/** Item ids as one line, the first MAX_LISTED of them. */
function listed(items: readonly string[]): string {
  if (items.length === 0) return '—';
  const shown = items.slice(0, MAX_LISTED).join(', ');
  return items.length > MAX_LISTED ? `${shown} … (+${items.length - MAX_LISTED} more)` : shown;
}

/** An item of a share: with its token when its worker holds the lease, else what it waits for. */
function itemLabel(item: UiJobItem): string {
  if (item.token !== undefined) return `${item.id} #${item.token}`;
  if (item.heldBy !== undefined) return `${item.id} (waits for ${item.heldBy})`;
  return `${item.id} (not taken yet)`;
}

/** Rows of the jobs table, one per job. */
function jobRows(jobs: readonly UiJob[]): DocumentFragment {
  const fragment = document.createDocumentFragment();
  for (const job of jobs) {
    const row = h('tr');
    row.dataset['job'] = job.name;
    row.dataset['disabled'] = String(job.disabled);
    cell(row, job.name, 'mono');
    cell(row, job.fn, 'mono');
    cell(row, job.mode, 'mono');
    cell(row, job.strategy);
    const state = cell(row, job.disabled ? 'disabled' : 'enabled');
    if (job.problem !== undefined) state.appendChild(h('div', job.problem, 'problem'));
    cell(row, `${job.items - job.unassigned.length}/${job.items}`, 'num');
    const unassigned = cell(row, listed(job.unassigned), 'mono');
    unassigned.title = job.unassigned.join('\n');
    fragment.appendChild(row);
  }
  return fragment;
}

/** A row of the assignment table: a worker's share of a job. */
function shareRow(job: UiJob, share: UiJobShare): HTMLTableRowElement {
  const row = h('tr');
  row.dataset['job'] = job.name;
  row.dataset['worker'] = share.workerId;
  row.dataset['live'] = String(share.live);
  row.dataset['manager'] = String(share.manager);
  cell(row, job.name, 'mono');
  const worker = cell(row, share.workerId, 'mono');
  if (share.manager) worker.appendChild(h('span', 'manager', 'tag'));
  if (!share.live) worker.appendChild(h('span', 'gone', 'tag'));
  const items = cell(row, share.items.length === 0 ? '—' : undefined);
  for (const item of share.items.slice(0, MAX_LISTED)) {
    const entry = h('span', itemLabel(item), 'job-item mono');
    entry.dataset['item'] = item.id;
    if (item.token !== undefined) entry.dataset['token'] = String(item.token);
    items.appendChild(entry);
  }
  if (share.items.length > MAX_LISTED)
    items.appendChild(h('span', `+${share.items.length - MAX_LISTED} more`, 'job-item'));
  return row;
}

/** Fills the jobs and assignment tables and the jobs' empty note. */
export function renderJobs(
  jobs: readonly UiJob[],
  jobsParent: string | undefined,
  tables: {
    readonly jobs: HTMLElement;
    readonly jobAssignment: HTMLElement;
    readonly jobsEmpty: HTMLElement;
  },
): void {
  tables.jobs.textContent = '';
  tables.jobs.appendChild(jobRows(jobs));
  const shares = document.createDocumentFragment();
  for (const job of jobs)
    for (const share of job.assignment) shares.appendChild(shareRow(job, share));
  tables.jobAssignment.textContent = '';
  tables.jobAssignment.appendChild(shares);
  tables.jobsEmpty.textContent =
    jobsParent === undefined
      ? 'No jobs shown (zk-plan ui --jobs <path> lists them).'
      : jobs.length === 0
        ? `No job is defined under ${jobsParent}.`
        : '';
}
