import type { Command } from 'commander';
import { setAction, withUsageHint } from '../action.js';
import { withZkPlan } from '../connection.js';
import { addConnectionOptions, checkPlanPath, type ConnectionOptions } from '../options.js';
import { print, printJson } from '../output.js';
import { DEFAULTS } from '../../config/defaults.js';

/** `zk-plan rm <plan>`: deletes a plan and everything below it. */
export function registerRm(program: Command): void {
  const command = program
    .command('rm')
    .description('delete a plan and everything below it (tasks, kept results, history)')
    .argument('<plan>', 'plan path, e.g. /plans/plan-0000000003');
  addConnectionOptions(command, DEFAULTS.cliConnectTimeoutMs.read);
  command.addHelpText('after', `\n--json prints { "plan": <path>, "removed": true }.`);
  withUsageHint(command);
  setAction(command, async (plan: string, options: ConnectionOptions) => {
    checkPlanPath(plan);
    await withZkPlan(options, (zkPlan) => zkPlan.plans.delete(plan)); // PlanNotFoundError (exit 5) when missing
    if (options.json) printJson({ plan, removed: true });
    else print(`removed ${plan}`);
  });
}
