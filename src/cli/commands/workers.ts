import type { Command } from 'commander';
import { DEFAULTS } from '../../config/defaults.js';
import type { WorkerInfo } from '../../registry/worker-info.js';
import { setAction, withUsageHint } from '../action.js';
import { withZkPlan } from '../connection.js';
import { addConnectionOptions, checkParentPath, type ConnectionOptions } from '../options.js';
import { formatDuration, formatTable, printJson, shortName, terminalWidth } from '../output.js';

/** `zk-plan workers <parent>`: the live worker pools following a parent (src/registry). */
export function registerWorkers(program: Command): void {
  const command = program
    .command('workers')
    .description('list the live worker pools following a parent: host, pid, version, loops, running tasks, functions')
    .argument('<parent>', 'parent path, e.g. /plans');
  addConnectionOptions(command, DEFAULTS.cliConnectTimeoutMs.read);
  command.addHelpText('after', `\n--json prints the registry records as listWorkers returns them.`);
  withUsageHint(command);
  setAction(command, async (parent: string, options: ConnectionOptions) => {
    checkParentPath(parent);
    const workers = await withZkPlan(options, (zkPlan) => zkPlan.listWorkers(parent));
    if (options.json) {
      printJson(workers);
      return;
    }
    if (workers.length === 0) {
      console.log(`no live worker pool follows ${parent}`);
      return;
    }
    const now = Date.now();
    console.log(
      formatTable<WorkerInfo>(
        workers,
        [
          { header: 'WORKER', value: (worker) => worker.id },
          { header: 'HOST', value: (worker) => worker.host },
          { header: 'PID', value: (worker) => String(worker.pid), right: true },
          { header: 'VERSION', value: (worker) => worker.version },
          { header: 'BUSY', value: (worker) => `${worker.running.length}/${worker.loops}`, right: true },
          { header: 'UP', value: (worker) => formatDuration(now - worker.startedAt.getTime()) },
          { header: 'RUNNING', value: (worker) => worker.running.map(shortName).join(',') || '-' },
          { header: 'FUNCTIONS', value: (worker) => worker.functions.join(',') || '(any)' },
        ],
        terminalWidth(),
      ),
    );
  });
}
