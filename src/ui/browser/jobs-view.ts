/**
 * The plans page's jobs section (`zk-plan ui --jobs <path>`): one row per job (function, mode,
 * strategy, enabled or not, why it could not be assigned, the items nobody got, counts of its
 * runs: failed, interrupted, misfires, failovers), one row per worker's share of a job, each item
 * with the fencing token of the lease its worker holds, and the newest runs of each job.
 */
import type { UiJob, UiJobItem, UiJobRun, UiJobShare } from '../ui-wire.js';
import { cell, h, when } from './dom.js';
import { formatDuration } from './time-format.js';

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
    const counts = job.runCounts;
    const runs = cell(
      row,
      `${counts.failed} failed, ${counts.interrupted} interrupted, ${counts.misfires} misfire(s) (${counts.caughtUp} caught up), ${counts.failovers} failover(s), ${counts.retries} retry(ies)`,
    );
    runs.dataset['runs'] = String(counts.runs);
    runs.title = `over its newest ${counts.runs} run(s); ${job.failedItems} item(s) with a last failure kept (zk-plan jobs runs ${job.name})`;
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

/** How long a run took, or that it has not ended. */
function took(run: UiJobRun): string {
  if (run.finishedAt === undefined) return '—';
  return formatDuration(Date.parse(run.finishedAt) - Date.parse(run.startedAt));
}

/** A row of the runs table: one run of a job, its error, misfire or failover beneath. */
function runRow(job: UiJob, run: UiJobRun): HTMLTableRowElement {
  const row = h('tr');
  row.dataset['job'] = job.name;
  row.dataset['run'] = run.run;
  row.dataset['state'] = run.state;
  row.dataset['cause'] = run.cause;
  cell(row, job.name, 'mono');
  const started = cell(row, when(run.startedAt), 'mono');
  started.title = `${run.run}\nstarted ${run.startedAt}${run.finishedAt === undefined ? '' : `\nended ${run.finishedAt}`}`;
  const state = cell(row, undefined);
  const badge = h('span', run.state, 'badge');
  badge.dataset['state'] = run.state;
  state.appendChild(badge);
  cell(row, run.cause);
  cell(row, String(run.attempt), 'num');
  cell(row, took(run), 'num');
  cell(row, run.worker, 'mono');
  const more = run.itemCount - run.items.length;
  const items = cell(row, `${run.items.join(' ')}${more > 0 ? ` +${more} more` : ''}`, 'mono');
  for (const note of [
    run.error,
    run.misfire,
    run.failoverOf === undefined ? undefined : `runs again ${run.failoverOf}`,
    ...(run.log ?? []),
  ])
    if (note !== undefined)
      items.appendChild(h('div', note, run.error === note ? 'problem' : 'note'));
  return row;
}

/** Fills the jobs, assignment and runs tables and the jobs' empty notes. */
export function renderJobs(
  jobs: readonly UiJob[],
  jobsParent: string | undefined,
  tables: {
    readonly jobs: HTMLElement;
    readonly jobAssignment: HTMLElement;
    readonly jobRuns: HTMLElement;
    readonly jobsEmpty: HTMLElement;
    readonly jobRunsEmpty: HTMLElement;
  },
): void {
  tables.jobs.textContent = '';
  tables.jobs.appendChild(jobRows(jobs));
  const shares = document.createDocumentFragment();
  for (const job of jobs)
    for (const share of job.assignment) shares.appendChild(shareRow(job, share));
  tables.jobAssignment.textContent = '';
  tables.jobAssignment.appendChild(shares);
  const runs = document.createDocumentFragment();
  for (const job of jobs) for (const run of job.runs) runs.appendChild(runRow(job, run));
  tables.jobRuns.textContent = '';
  tables.jobRuns.appendChild(runs);
  tables.jobRunsEmpty.textContent =
    jobs.length > 0 && jobs.every((job) => job.runs.length === 0) ? 'No job has run yet.' : '';
  tables.jobsEmpty.textContent =
    jobsParent === undefined
      ? 'No jobs shown (zk-plan ui --jobs <path> lists them).'
      : jobs.length === 0
        ? `No job is defined under ${jobsParent}.`
        : '';
}
