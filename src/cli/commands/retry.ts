import type { Command } from 'commander';
import { setAction, withUsageHint } from '../action.js';
import { withZkPlan } from '../connection.js';
import { addConnectionOptions, checkPlanPath, type ConnectionOptions } from '../options.js';
import { print, printJson } from '../output.js';
import { DEFAULTS } from '../../config/defaults.js';

/** `zk-plan retry <plan>`: lets the plan's failed tasks run again. */
export function registerRetry(program: Command): void {
  const command = program
    .command('retry')
    .description(
      "reset a plan's failed tasks (attempts too) so that they, then their dependents, run again",
    )
    .argument('<plan>', 'plan path, e.g. /plans/plan-0000000003');
  addConnectionOptions(command, DEFAULTS.cliConnectTimeoutMs.read);
  command.addHelpText('after', `\n--json prints { "plan": <path>, "reset": [<task path>, …] }.`);
  withUsageHint(command);
  setAction(command, async (plan: string, options: ConnectionOptions) => {
    checkPlanPath(plan);
    const reset = await withZkPlan(options, (zkPlan) => zkPlan.control.retryFailed(plan));
    if (options.json) {
      printJson({ plan, reset });
      return;
    }
    if (reset.length === 0) {
      print(`${plan}: no failed task to retry`);
      return;
    }
    print(`${plan}: ${reset.length} failed task(s) reset; they, then their dependents, run again:`);
    for (const task of reset) print(`  ${task}`);
  });
}
