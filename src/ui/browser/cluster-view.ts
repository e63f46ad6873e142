/**
 * The plans page's cluster section: the live worker pools (listWorkers) and the concurrency
 * limits with their holders (listConcurrencyLimits), read from `/api/cluster`.
 */
import type { UiCluster, UiLimit, UiWorker } from '../ui-wire.js';
import { cell, h, when } from './dom.js';

/** Rows of the workers table, one per live worker pool. */
function workerRows(workers: readonly UiWorker[]): DocumentFragment {
  const fragment = document.createDocumentFragment();
  for (const worker of workers) {
    const row = h('tr');
    row.dataset['worker'] = worker.id;
    cell(row, worker.id, 'mono');
    cell(row, `${worker.host} (pid ${worker.pid})`);
    cell(row, `${worker.running.length}/${worker.loops}`, 'num');
    const functions = cell(row, worker.functions.length === 0 ? 'any' : worker.functions.join(', '), 'mono');
    functions.title = worker.functions.join('\n');
    cell(row, worker.version);
    cell(row, when(worker.startedAt));
    cell(row, when(worker.updatedAt));
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
      const line = h('div', `${holder.task.slice(holder.task.lastIndexOf('/', holder.task.lastIndexOf('/') - 1) + 1)} on ${holder.workerId}`, 'mono');
      line.title = `${holder.task} since ${when(holder.at) ?? '?'}`;
      holders.appendChild(line);
    }
    fragment.appendChild(row);
  }
  return fragment;
}

/** Fills the two tables and their empty notes. */
export function renderCluster(
  cluster: UiCluster,
  tables: { workers: HTMLElement; limits: HTMLElement; workersEmpty: HTMLElement; limitsEmpty: HTMLElement },
): void {
  tables.workers.textContent = '';
  tables.workers.appendChild(workerRows(cluster.workers));
  tables.workersEmpty.textContent = cluster.workers.length === 0 ? 'No live worker process is registered under this parent.' : '';
  tables.limits.textContent = '';
  tables.limits.appendChild(limitRows(cluster.limits));
  tables.limitsEmpty.textContent = cluster.limits.length === 0 ? 'No concurrency limit is set (zk-plan limit <parent> <key> <n>).' : '';
}
