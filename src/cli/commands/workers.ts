import { Option, type Command } from 'commander';
import { DEFAULTS } from '../../config/defaults.js';
import type { JobWorkerSummary } from '../../jobs/jobs.js';
import type { WorkerInfo } from '../../registry/worker-info.js';
import { UsageError } from '../exit-codes.js';
import { setAction, withUsageHint } from '../action.js';
import { withZkPlan } from '../connection.js';
import { addConnectionOptions, checkParentPath, type ConnectionOptions } from '../options.js';
import {
  formatDuration,
  formatTable,
  print,
  printJson,
  shortName,
  terminalWidth,
} from '../output.js';

interface WorkersOptions extends ConnectionOptions {
  readonly jobs?: string;
}

/** `zk-plan workers [parent] [--jobs <path>]`: the live worker pools following a parent (src/registry), and the job workers with their items. */
export function registerWorkers(program: Command): void {
  const command = program
    .command('workers')
    .description(
      'list the live worker pools following a parent (host, pid, version, loops, running tasks, functions, +shell when it runs shell tasks) and, with --jobs, the job workers with their items (and which manages, which are disabled)',
    )
    .argument('[parent]', 'parent path of the plans, e.g. /plans')
    .addOption(
      new Option(
        '--jobs <path>',
        'also list the job workers of this jobs parent, each with its items per job (and which manages, which are disabled)',
      ),
    );
  addConnectionOptions(command, DEFAULTS.cliConnectTimeoutMs.read);
  command.addHelpText(
    'after',
    `\n--json prints the live worker pools' registry records as a list; with --jobs, { workers, jobWorkers }: the pools, and the job workers with their items, manager and disabled flags.`,
  );
  withUsageHint(command);
  setAction(command, async (parent: string | undefined, options: WorkersOptions) => {
    if (parent === undefined && options.jobs === undefined)
      throw new UsageError('give a parent of plans, --jobs <path>, or both');
    if (parent !== undefined) checkParentPath(parent);
    const jobsParent = options.jobs === undefined ? undefined : checkParentPath(options.jobs);
    const [workers, jobWorkers] = await withZkPlan(options, (zkPlan) =>
      Promise.all([
        parent === undefined ? [] : zkPlan.listWorkers(parent),
        jobsParent === undefined ? undefined : zkPlan.jobs(jobsParent).workers(),
      ]),
    );
    if (options.json) {
      printJson(jobWorkers === undefined ? workers : { workers, jobWorkers });
      return;
    }
    if (parent !== undefined)
      print(workers.length === 0 ? `no live worker pool follows ${parent}` : formatPools(workers));
    if (jobWorkers !== undefined)
      print(
        jobWorkers.length === 0
          ? `no live job worker under ${jobsParent}`
          : formatJobWorkers(jobWorkers),
      );
  });
}

function formatPools(workers: readonly WorkerInfo[]): string {
  const now = Date.now();
  return formatTable<WorkerInfo>(
    workers,
    [
      { header: 'WORKER', value: (worker) => worker.id },
      { header: 'HOST', value: (worker) => worker.host },
      { header: 'PID', value: (worker) => String(worker.pid), right: true },
      { header: 'VERSION', value: (worker) => worker.version },
      {
        header: 'BUSY',
        value: (worker) => `${worker.running.length}/${worker.loops}`,
        right: true,
      },
      { header: 'UP', value: (worker) => formatDuration(now - worker.startedAt.getTime()) },
      { header: 'RUNNING', value: (worker) => worker.running.map(shortName).join(',') || '-' },
      {
        header: 'FUNCTIONS',
        value: (worker) =>
          `${worker.functions.join(',') || '(any)'}${worker.allowShell ? ' +shell' : ''}`,
      },
    ],
    terminalWidth(),
  );
}

function formatJobWorkers(workers: readonly JobWorkerSummary[]): string {
  return formatTable<JobWorkerSummary>(
    workers,
    [
      {
        header: 'JOB WORKER',
        value: (worker) =>
          `${worker.id}${worker.manager ? ' (manager)' : ''}${worker.disabled ? ' (disabled)' : ''}`,
      },
      { header: 'PID', value: (worker) => String(worker.pid), right: true },
      { header: 'LEASE', value: (worker) => `${worker.leaseMs}ms`, right: true },
      {
        header: 'ITEMS',
        value: (worker) =>
          Object.entries(worker.items)
            .map(([job, items]) => `${job}: ${items.join(',')}`)
            .join('; ') || '-',
      },
    ],
    terminalWidth(),
  );
}
