/**
 * The plans page's cluster section: the live worker pools (listWorkers), the concurrency
 * limits with their holders (listConcurrencyLimits), the schedules and the jobs (jobs-view.ts),
 * read from `/api/cluster`.
 */
import type { UiCluster, UiJobWorker, UiLimit, UiSchedule, UiWorker } from '../ui-wire.js';
import { cell, h, when } from './dom.js';
import { renderJobs } from './jobs-view.js';
import { triggerControl } from './schedule-actions.js';

/** Rows of the workers table, one per live worker pool. */
function workerRows(workers: readonly UiWorker[]): DocumentFragment {
  const fragment = document.createDocumentFragment();
  for (const worker of workers) {
    const row = h('tr');
    row.dataset['worker'] = worker.id;
    cell(row, worker.id, 'mono');
    cell(row, `${worker.host} (pid ${worker.pid})`);
    cell(row, `${worker.running.length}/${worker.loops}`, 'num');
    const functions = cell(
      row,
      worker.functions.length === 0 ? 'any' : worker.functions.join(', '),
      'mono',
    );
    functions.title = worker.functions.join('\n');
    cell(row, worker.version);
    cell(row, when(worker.startedAt));
    cell(row, when(worker.updatedAt));
    fragment.appendChild(row);
  }
  return fragment;
}

/** Rows of the workers table for the job workers (`zk-plan ui --jobs`), after the worker pools. */
function jobWorkerRows(workers: readonly UiJobWorker[]): DocumentFragment {
  const fragment = document.createDocumentFragment();
  for (const worker of workers) {
    const row = h('tr');
    row.dataset['worker'] = worker.id;
    row.dataset['kind'] = 'job';
    row.dataset['disabled'] = String(worker.disabled);
    cell(row, worker.id, 'mono');
    cell(row, `${worker.host} (pid ${worker.pid})`);
    cell(row, `${worker.items} item(s)`, 'num');
    const functions = cell(
      row,
      `${worker.jobFunctions.join(', ')} (job worker${worker.manager ? ', manager' : ''}${worker.disabled ? ', disabled: assigned nothing' : ''})`,
      'mono',
    );
    functions.title = worker.jobFunctions.join('\n');
    cell(row, '');
    cell(row, when(worker.startedAt));
    cell(row, '');
    fragment.appendChild(row);
  }
  return fragment;
}

/** Rows of the limits table, one per key. */
function limitRows(limits: readonly UiLimit[]): DocumentFragment {
  const fragment = document.createDocumentFragment();
  for (const limit of limits) {
    const row = h('tr');
    row.dataset['key'] = limit.key;
    row.dataset['full'] = String(limit.holders.length >= limit.limit);
    cell(row, limit.key, 'mono');
    cell(row, `${limit.holders.length}/${limit.limit}`, 'num');
    const holders = cell(row);
    for (const holder of limit.holders) {
      const line = h(
        'div',
        `${holder.task.slice(holder.task.lastIndexOf('/', holder.task.lastIndexOf('/') - 1) + 1)} on ${holder.workerId}`,
        'mono',
      );
      line.title = `${holder.task} since ${when(holder.at) ?? '?'}`;
      holders.appendChild(line);
    }
    fragment.appendChild(row);
  }
  return fragment;
}

/** Rows of the schedules table: timing, next fire times, and the recent runs linked to their plans. */
function scheduleRows(schedules: readonly UiSchedule[], redraw: () => void): DocumentFragment {
  const fragment = document.createDocumentFragment();
  for (const schedule of schedules) {
    const row = h('tr');
    row.dataset['schedule'] = schedule.name;
    row.dataset['paused'] = String(schedule.paused);
    const name = cell(row, schedule.name, 'mono');
    name.title = `plans under ${schedule.planParent}`;
    name.appendChild(triggerControl(schedule.name, redraw));
    cell(
      row,
      `${schedule.cron} (${schedule.timezone})${schedule.paused ? ' · paused' : ''}`,
      'mono',
    );
    cell(
      row,
      schedule.nextFireTimes
        .slice(0, 2)
        .map((at) => when(at) ?? at)
        .join(', ') || '—',
    );
    const runs = cell(row);
    for (const run of schedule.runs.slice(0, 5)) {
      const line = h('div', undefined, 'run');
      line.dataset['state'] = run.state;
      const label = `${when(run.firedAt) ?? run.firedAt} ${run.kind === 'manual' ? '(manual) ' : ''}${run.state}${run.detail === undefined ? '' : `: ${run.detail}`}`;
      if (run.shown && run.state === 'fired') {
        const link = h('a', label);
        link.setAttribute('href', `/plan?path=${encodeURIComponent(run.plan)}`);
        line.appendChild(link);
      } else line.textContent = label;
      line.title = run.plan;
      runs.appendChild(line);
    }
    fragment.appendChild(row);
  }
  return fragment;
}

/** Fills the tables and their empty notes. */
export function renderCluster(
  cluster: UiCluster,
  tables: {
    workers: HTMLElement;
    limits: HTMLElement;
    schedules: HTMLElement;
    jobs: HTMLElement;
    jobAssignment: HTMLElement;
    jobRuns: HTMLElement;
    jobRunsEmpty: HTMLElement;
    workersEmpty: HTMLElement;
    limitsEmpty: HTMLElement;
    schedulesEmpty: HTMLElement;
    jobsEmpty: HTMLElement;
  },
): void {
  tables.workers.textContent = '';
  tables.workers.appendChild(workerRows(cluster.workers));
  tables.workers.appendChild(jobWorkerRows(cluster.jobWorkers));
  tables.workersEmpty.textContent =
    cluster.workers.length + cluster.jobWorkers.length === 0
      ? `No live worker process is registered under this parent${cluster.jobsParent === undefined ? '' : ` nor job worker under ${cluster.jobsParent}`}.`
      : '';
  tables.limits.textContent = '';
  tables.limits.appendChild(limitRows(cluster.limits));
  tables.limitsEmpty.textContent =
    cluster.limits.length === 0
      ? 'No concurrency limit is set (zk-plan limit <parent> <key> <n>).'
      : '';
  const drawSchedules = (): void => {
    tables.schedules.textContent = '';
    tables.schedules.appendChild(scheduleRows(cluster.schedules, drawSchedules));
  };
  drawSchedules();
  tables.schedulesEmpty.textContent =
    cluster.schedules.length > 0
      ? ''
      : cluster.schedulesParent === undefined
        ? 'No schedules shown (zk-plan ui --schedules <path> lists them).'
        : `No schedule is defined under ${cluster.schedulesParent} (zk-plan schedule put <file> --schedules ${cluster.schedulesParent} adds one).`;
  renderJobs(cluster.jobs, cluster.jobsParent, tables);
}
