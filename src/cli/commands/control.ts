import { Option, type Command } from 'commander';
import { DEFAULTS } from '../../config/defaults.js';
import { setAction, withUsageHint } from '../action.js';
import { withZkPlan } from '../connection.js';
import { addConnectionOptions, checkPlanPath, type ConnectionOptions } from '../options.js';
import { print, printJson, shortName } from '../output.js';

interface PauseCliOptions extends ConnectionOptions {
  readonly abortRunning?: boolean;
}

interface CancelCliOptions extends ConnectionOptions {
  readonly reason?: string;
}

/** `zk-plan pause|resume|cancel <plan>`: plan control (src/control/plan-control.ts). */
export function registerControl(program: Command): void {
  const pause = program
    .command('pause')
    .description(
      'pause a plan: no new task of it starts until resume; running ones finish (or, with --abort-running, are aborted and run again after resume)',
    )
    .argument('<plan>', 'plan path, e.g. /plans/plan-0000000003')
    .addOption(
      new Option('--abort-running', 'abort running tasks too; they are given back uncharged'),
    );
  addConnectionOptions(pause, DEFAULTS.cliConnectTimeoutMs.read);
  pause.addHelpText(
    'after',
    `\n--json prints { "plan", "state": "paused", "running": [tasks held when the pause landed] }.`,
  );
  withUsageHint(pause);
  setAction(pause, async (plan: string, options: PauseCliOptions) => {
    checkPlanPath(plan);
    const { running } = await withZkPlan(options, (zkPlan) =>
      zkPlan.control.pause(plan, { abortRunning: options.abortRunning === true }),
    );
    if (options.json) printJson({ plan, state: 'paused', running });
    else
      print(
        `paused ${plan}${running.length > 0 ? `; still running: ${running.map(shortName).join(', ')}` : ''}`,
      );
  });

  const resume = program
    .command('resume')
    .description('let a paused plan run again')
    .argument('<plan>', 'plan path');
  addConnectionOptions(resume, DEFAULTS.cliConnectTimeoutMs.read);
  resume.addHelpText(
    'after',
    `\n--json prints { "plan", "state": "running" }. A cancelled plan cannot resume (exit 6).`,
  );
  withUsageHint(resume);
  setAction(resume, async (plan: string, options: ConnectionOptions) => {
    checkPlanPath(plan);
    await withZkPlan(options, (zkPlan) => zkPlan.control.resume(plan));
    if (options.json) printJson({ plan, state: 'running' });
    else print(`resumed ${plan}`);
  });

  const cancel = program
    .command('cancel')
    .description(
      'cancel a plan for good: running tasks are aborted, the rest deleted; `wait` on it exits 6',
    )
    .argument('<plan>', 'plan path')
    .addOption(new Option('--reason <text>', 'why, kept with the plan and shown by show and wait'));
  addConnectionOptions(cancel, DEFAULTS.cliConnectTimeoutMs.read);
  cancel.addHelpText('after', `\n--json prints { "plan", "state": "cancelled", "reason" }.`);
  withUsageHint(cancel);
  setAction(cancel, async (plan: string, options: CancelCliOptions) => {
    checkPlanPath(plan);
    await withZkPlan(options, (zkPlan) =>
      zkPlan.control.cancel(plan, options.reason !== undefined ? { reason: options.reason } : {}),
    );
    if (options.json) printJson({ plan, state: 'cancelled', reason: options.reason ?? null });
    else print(`cancelled ${plan}`);
  });
}
