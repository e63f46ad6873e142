import { readFile } from 'node:fs/promises';
import { Option, type Command } from 'commander';
import superjson from 'superjson';
import { DEFAULTS } from '../../config/defaults.js';
import type { PlanSnapshot } from '../../snapshot/plan-snapshot.js';
import { setAction, withUsageHint } from '../action.js';
import { withZkPlan } from '../connection.js';
import { UsageError } from '../exit-codes.js';
import { loadFunctions } from '../load-functions.js';
import {
  addConnectionOptions,
  checkParentPath,
  checkPlanPath,
  integer,
  type ConnectionOptions,
} from '../options.js';
import { print, printError, printJson } from '../output.js';
import { escapeJsonControls } from '../../util/printable.js';

interface ImportCliOptions extends ConnectionOptions {
  readonly functions?: string;
}

interface RerunCliOptions extends ImportCliOptions {
  readonly from?: string;
  readonly wait: boolean;
  readonly timeoutMs?: number;
}

/** `zk-plan export <plan>`, `zk-plan import <parent> <file>`, `zk-plan rerun <plan> --from <key|failed>` (src/snapshot). */
export function registerSnapshot(program: Command): void {
  const exportCommand = program
    .command('export')
    .description(
      'print a snapshot of a plan (its spec, or one derived from its tasks; params, each task’s state, results, failures) as superjson',
    )
    .argument('<plan>', 'plan path');
  addConnectionOptions(exportCommand, DEFAULTS.cliConnectTimeoutMs.read);
  exportCommand.addHelpText(
    'after',
    `\nzk-plan export /plans/plan-0000000003 > snap.json, then zk-plan import <parent> snap.json (on any ensemble).`,
  );
  withUsageHint(exportCommand);
  setAction(exportCommand, async (plan: string, options: ConnectionOptions) => {
    checkPlanPath(plan);
    const snapshot = await withZkPlan(options, (zkPlan) => zkPlan.snapshots.export(plan));
    // superjson: dates, maps and the like come back as they were; C1 controls escaped as printJson does
    process.stdout.write(`${escapeJsonControls(superjson.stringify(snapshot))}\n`);
  });

  const importCommand = program
    .command('import')
    .description(
      'recreate a snapshot (zk-plan export) as a new plan under a parent; done tasks are not run again; safe to repeat',
    )
    .argument('<parent>', 'parent of the new plan')
    .argument('<file>', 'the snapshot')
    .addOption(
      new Option(
        '--functions <module>',
        'also check the spec’s function names against this module’s registry',
      ),
    );
  addConnectionOptions(importCommand, DEFAULTS.cliConnectTimeoutMs.read);
  importCommand.addHelpText(
    'after',
    `\nPrints the new plan's path (--json: { "plan", "tasks": { key: path }, "existing" }). Importing the same snapshot under the same parent again
prints the plan the first import made ("existing": true), and replaces one that an import cut short had left unready.`,
  );
  withUsageHint(importCommand);
  setAction(importCommand, async (parent: string, file: string, options: ImportCliOptions) => {
    checkParentPath(parent);
    const snapshot = await readSnapshot(file);
    const functions =
      options.functions === undefined ? undefined : await loadFunctions(options.functions);
    const imported = await withZkPlan(
      options,
      (zkPlan) => zkPlan.snapshots.import(parent, snapshot),
      functions === undefined ? {} : { functions },
    );
    if (options.json) printJson(imported);
    else print(imported.plan);
    if (imported.existing && !options.json)
      printError(
        `zk-plan: ${file} was imported under ${parent} before: ${imported.plan} is that import (nothing new was made)`,
      );
  });

  const rerun = program
    .command('rerun')
    .description(
      'start a new run of a plan’s spec from a task (it and its downstream run again; the rest reuse their results)',
    )
    .argument('<plan>', 'plan path')
    .addOption(
      new Option(
        '--from <key>',
        "the task key to start from, or 'failed' for every failed task (required)",
      ),
    )
    .addOption(
      new Option('--wait', 'wait until the new plan ends (exit codes as wait)').default(false),
    )
    .addOption(
      new Option('--timeout-ms <ms>', 'with --wait: give up after this long (exit 3)').argParser(
        integer(1),
      ),
    );
  addConnectionOptions(rerun, DEFAULTS.cliConnectTimeoutMs.read);
  rerun.addHelpText('after', `\nPrints the new plan's path (--json: { "plan", "tasks" }).`);
  withUsageHint(rerun);
  setAction(rerun, async (plan: string, options: RerunCliOptions) => {
    checkPlanPath(plan);
    if (!options.from) throw new UsageError('--from <key|failed> is required');
    const from = options.from;
    const made = await withZkPlan(options, async (zkPlan) => {
      const result = await zkPlan.snapshots.rerun(plan, { from });
      if (options.wait)
        await zkPlan.waitForCompletion(result.plan, {
          timeoutMs: options.timeoutMs ?? DEFAULTS.waitTimeoutMs,
        });
      return result;
    });
    if (options.json) printJson(made);
    else print(made.plan);
  });
}

async function readSnapshot(file: string): Promise<PlanSnapshot> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new UsageError(`cannot read ${file}: ${(error as Error).message}`);
  }
  try {
    return superjson.parse<PlanSnapshot>(text);
  } catch (error) {
    throw new UsageError(
      `${file} is not a snapshot written by zk-plan export: ${(error as Error).message}`,
    );
  }
}
