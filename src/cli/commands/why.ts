import type { Command } from 'commander';
import { DEFAULTS } from '../../config/defaults.js';
import { MAX_LIMIT } from '../../limits/limit-record.js';
import {
  TASK_PREFIX,
  assertValidPath,
  hasSequentialName,
  isZkPlanPlanName,
  nameOf,
} from '../../zk/layout.js';
import { setAction, withUsageHint } from '../action.js';
import { withZkPlan } from '../connection.js';
import { UsageError } from '../exit-codes.js';
import { addConnectionOptions, checkParentPath, type ConnectionOptions } from '../options.js';
import { print, printJson, shortName } from '../output.js';
import { resolveTaskArgument, taskArgument } from '../task-argument.js';

/** `zk-plan why <task|plan> [key]` (explain.task, explain.plan) and `zk-plan limit <parent> <key> [n]` (concurrency limits). */
export function registerWhy(program: Command): void {
  const why = program
    .command('why')
    .description(
      'say why a task is not running (a code, a sentence, the data behind it), or why a plan is not progressing',
    )
    .argument('<path>', 'a task path (/plans/plan-0000000003/task-0000000007), or a plan path')
    .argument(
      '[key]',
      "with a plan path: the task of the plan known by this key (its spec's, or the key it was added with)",
    );
  addConnectionOptions(why, DEFAULTS.cliConnectTimeoutMs.read);
  why.addHelpText(
    'after',
    `
  zk-plan why /plans/plan-0000000003 report   the task with the key "report"
--json prints the explanation as a JSON document: a task's { task, key?, code, message, remedy?, details }, a plan's { plan, state, message, reasons: [{ code, message, remedy?, tasks }] }; remedy is { api, cli }.`,
  );
  withUsageHint(why);
  setAction(why, async (path: string, key: string | undefined, options: ConnectionOptions) => {
    assertValidPath('path', path);
    const name = nameOf(path);
    if (hasSequentialName(name, TASK_PREFIX) || key !== undefined) {
      const task = taskArgument(path, key);
      const explanation = await withZkPlan(options, async (zkPlan) =>
        zkPlan.explain.task(await resolveTaskArgument(zkPlan, task)),
      );
      if (options.json) printJson(explanation);
      else
        print(
          `${explanation.key ?? shortName(explanation.task)}: ${explanation.code}: ${explanation.message}${explanation.remedy ? `; ${explanation.remedy.cli}` : ''}`,
        );
      return;
    }
    if (!isZkPlanPlanName(name))
      throw new UsageError(`${path} is neither a task-N nor a plan path`);
    const explanation = await withZkPlan(options, (zkPlan) => zkPlan.explain.plan(path));
    if (options.json) {
      printJson(explanation);
      return;
    }
    print(`${shortName(path)}: ${explanation.message}`);
    for (const reason of explanation.reasons)
      print(
        `  ${reason.code} (${reason.tasks.length}): ${reason.tasks.slice(0, 5).map(shortName).join(', ')}${reason.tasks.length > 5 ? ', …' : ''}: ${reason.message}${reason.remedy ? `; ${reason.remedy.cli}` : ''}`,
      );
  });

  const limit = program
    .command('limit')
    .description(
      'show or set the cluster-wide concurrency limit of a key: at most <n> tasks with it run at once under <parent>',
    )
    .argument('<parent>', 'parent path, e.g. /plans')
    .argument('<key>', 'the concurrency key tasks are added with')
    .argument(
      '[n]',
      `the new limit (0 … ${MAX_LIMIT}); without it, the current limit and its holders are shown`,
    );
  addConnectionOptions(limit, DEFAULTS.cliConnectTimeoutMs.read);
  withUsageHint(limit);
  setAction(
    limit,
    async (parent: string, key: string, n: string | undefined, options: ConnectionOptions) => {
      checkParentPath(parent);
      if (n !== undefined) {
        const value = Number(n);
        if (n.trim() === '' || !Number.isInteger(value) || value < 0 || value > MAX_LIMIT)
          throw new UsageError(
            `the limit must be a whole number from 0 to ${MAX_LIMIT}, got '${n}'`,
          );
        await withZkPlan(options, (zkPlan) => zkPlan.limits(parent).set(key, value));
        if (options.json) printJson({ parent, key, limit: value });
        else print(`limit of "${key}" under ${parent}: ${value}`);
        return;
      }
      const current = await withZkPlan(options, (zkPlan) => zkPlan.limits(parent).get(key));
      if (options.json) printJson(current ?? null);
      else if (current === undefined) print(`"${key}" has no limit under ${parent}`);
      else
        print(
          `limit of "${key}" under ${parent}: ${current.holders.length}/${current.limit} held${current.holders.map((holder) => `\n  ${shortName(holder.task)} by ${holder.workerId}`).join('')}`,
        );
    },
  );
}
