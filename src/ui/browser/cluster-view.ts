/**
 * The cluster page's tables: the live worker pools (listWorkers) and job workers, and the
 * concurrency limits with their holders (listConcurrencyLimits), read from `/api/cluster`.
 */
import type { UiCluster, UiJobWorker, UiLimit, UiWorker } from '../ui-wire.js';
import { cell, h, when } from './dom.js';
import { isoMs } from './time-format.js';
import { timeElement } from './time-view.js';
import { preferredZone } from './time-zone.js';

/** Rows of the workers table, one per live worker pool. */
function workerRows(workers: readonly UiWorker[], now: number, zone: string): DocumentFragment {
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
    cell(row).appendChild(timeElement(isoMs(worker.startedAt), now, zone));
    cell(row).appendChild(timeElement(isoMs(worker.updatedAt), now, zone));
    fragment.appendChild(row);
  }
  return fragment;
}

/** Rows of the workers table for the job workers (`zk-plan ui --jobs`), after the worker pools. */
function jobWorkerRows(
  workers: readonly UiJobWorker[],
  now: number,
  zone: string,
): DocumentFragment {
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
    cell(row).appendChild(timeElement(isoMs(worker.startedAt), now, zone));
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

/** The cluster page's tables and their empty notes. */
export interface ClusterTables {
  readonly workers: HTMLElement;
  readonly limits: HTMLElement;
  readonly workersEmpty: HTMLElement;
  readonly limitsEmpty: HTMLElement;
}

/** Fills the workers (worker pools, then job workers) and limits tables and their empty notes. */
export function renderCluster(cluster: UiCluster, tables: ClusterTables): void {
  tables.workers.textContent = '';
  const now = Date.now();
  const zone = preferredZone();
  tables.workers.appendChild(workerRows(cluster.workers, now, zone));
  tables.workers.appendChild(jobWorkerRows(cluster.jobWorkers, now, zone));
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
}

/** Fills the jobs page's workers table with the job workers alone (`zk-plan ui --jobs`). */
export function renderJobWorkers(
  cluster: UiCluster,
  tables: { readonly workers: HTMLElement; readonly workersEmpty: HTMLElement },
): void {
  tables.workers.textContent = '';
  tables.workers.appendChild(jobWorkerRows(cluster.jobWorkers, Date.now(), preferredZone()));
  tables.workersEmpty.textContent =
    cluster.jobWorkers.length > 0 || cluster.jobsParent === undefined
      ? ''
      : `No job worker is registered under ${cluster.jobsParent}.`;
}
