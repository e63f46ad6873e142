import type { Command } from 'commander';
import { DEFAULTS } from '../../config/defaults.js';
import { formatPlanProgress } from '../../plan/plan-progress.js';
import type { PlanSummary } from '../../plan/plan-view.js';
import { setAction, withUsageHint } from '../action.js';
import { withZkPlan } from '../connection.js';
import { addConnectionOptions, checkParentPath, type ConnectionOptions } from '../options.js';
import { formatTable, print, printJson, terminalWidth, type Column } from '../output.js';

/** `zk-plan plans <parent>`: one line per plan, oldest first. */
export function registerPlans(program: Command): void {
  const command = program
    .command('plans')
    .description('list the plans under a parent, oldest first: state, progress, failed tasks')
    .argument('<parent>', 'znode under which the plans are, e.g. /plans');
  addConnectionOptions(command, DEFAULTS.cliConnectTimeoutMs.read);
  command.addHelpText(
    'after',
    `
PROGRESS is done/total, every task of the plan counted (from its history, which every plan keeps
unless created with { history: false }; for such a plan, the number of tasks left).
NAME is the plan's name, when it has one (given when it was created, a spec's name, or its schedule's).
--json prints an array of { plan, status, done, historyKept, createdAt, finishedAt }; status.name is the plan's name, and status.counts has done, remaining and
total (total = done + remaining), as zk-plan wait and the web view count them.`,
  );
  withUsageHint(command);
  setAction(command, async (parent: string, options: ConnectionOptions) => {
    checkParentPath(parent);
    const plans = await withZkPlan(options, (zkPlan) => zkPlan.plans.list(parent));
    if (options.json) {
      printJson(plans);
      return;
    }
    if (plans.length === 0) {
      print(`no plans under ${parent}`);
      return;
    }
    print(formatTable(plans, planColumns(plans), terminalWidth()));
  });
}

/** `7/10` when the plan keeps a history (even before anything is done), else `3 left` (a plan created with { history: false }). */
export function formatProgress(summary: PlanSummary): string {
  return formatPlanProgress(summary.status.counts, summary.historyKept === true);
}

/** The table's columns; NAME only when some plan has a name (`createPlan(parent, { name })`, a spec's, a schedule's). */
export function planColumns(plans: readonly PlanSummary[]): Column<PlanSummary>[] {
  return [
    { header: 'PLAN', value: (row) => row.plan },
    ...(plans.some((row) => row.status.name !== undefined)
      ? [{ header: 'NAME', value: (row: PlanSummary) => row.status.name ?? '-' }]
      : []),
    { header: 'STATE', value: (row) => row.status.state },
    { header: 'PROGRESS', value: formatProgress, right: true },
    { header: 'FAILED', value: (row) => String(row.status.counts.failed), right: true },
  ];
}
