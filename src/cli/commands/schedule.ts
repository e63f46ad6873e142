import { Option, type Command } from 'commander';
import { DEFAULTS } from '../../config/defaults.js';
import { ScheduleNotFoundError } from '../../errors/schedule-errors.js';
import type { ZkPlan } from '../../zk-plan.js';
import type { ScheduleInput } from '../../schedule/schedule-definition.js';
import type { ScheduleSummary } from '../../schedule/schedules.js';
import { scheduleNodes } from '../../zk/layout.js';
import { setAction, withUsageHint } from '../action.js';
import { withZkPlan } from '../connection.js';
import { readDocument } from '../documents.js';
import { loadFunctions } from '../load-functions.js';
import { addConnectionOptions, checkParentPath, type ConnectionOptions } from '../options.js';
import { print, printJson } from '../output.js';

interface ScheduleCliOptions extends ConnectionOptions {
  readonly schedules: string;
  readonly functions?: string;
}

/** `zk-plan schedule put|ls|pause|resume|trigger|rm`: cron-timed plans (src/schedule). */
export function registerSchedule(program: Command): void {
  const schedule = program
    .command('schedule')
    .description(
      'cron-timed plans: put, list, pause, resume, trigger and remove schedules (run them with zk-plan worker --schedules)',
    );
  const command = (name: string, description: string): Command => {
    const sub = schedule
      .command(name)
      .description(description)
      .addOption(
        new Option('--schedules <path>', 'parent of the schedules').default(
          DEFAULTS.cliParents.schedules,
        ),
      );
    addConnectionOptions(sub, DEFAULTS.cliConnectTimeoutMs.read);
    withUsageHint(sub);
    return sub;
  };

  const put = command(
    'put',
    'create or replace a schedule from a JSON or YAML file { name, cron, timezone?, spec, params?, planParent, overlap?, misfire?, … }',
  )
    .argument('<file>', 'the schedule: JSON, or YAML when its name ends in .yaml or .yml')
    .addOption(
      new Option(
        '--functions <module>',
        'also check the spec’s function names against this module’s registry',
      ),
    );
  setAction(put, async (file: string, options: ScheduleCliOptions) => {
    const input = (await readDocument(file)) as ScheduleInput;
    const functions =
      options.functions === undefined ? undefined : await loadFunctions(options.functions);
    const stored = await withZkPlan(
      options,
      (zkPlan) => zkPlan.schedules(checkParentPath(options.schedules)).put(input),
      functions === undefined ? {} : { functions },
    );
    if (options.json) printJson(stored);
    else
      print(
        `put ${stored.name}: ${stored.cron} (${stored.timezone})${stored.paused ? ', paused' : ''}, plans under ${stored.planParent}`,
      );
  });

  const ls = command('ls', 'list the schedules with their next fire times and recent runs');
  setAction(ls, async (options: ScheduleCliOptions) => {
    const summaries = await withZkPlan(options, (zkPlan) =>
      zkPlan.schedules(checkParentPath(options.schedules)).list(),
    );
    if (options.json) printJson(summaries);
    else if (summaries.length === 0) print(`no schedules under ${options.schedules}`);
    else for (const summary of summaries) print(formatSummary(summary));
  });

  for (const [name, verb, description] of [
    ['pause', 'paused', 'no tick of the schedule fires until resume'],
    [
      'resume',
      'resumed',
      'fire again from the next tick on (ticks that passed while paused never fire)',
    ],
    ['rm', 'removed', 'remove the schedule and its tick records (its plans stay)'],
  ] as const) {
    const sub = command(name, description).argument('<name>', 'the schedule');
    setAction(sub, async (scheduleName: string, options: ScheduleCliOptions) => {
      await withZkPlan(options, (zkPlan) => change(zkPlan, options.schedules, name, scheduleName));
      if (options.json) printJson({ schedule: scheduleName, state: verb });
      else print(`${verb} ${scheduleName}`);
    });
  }

  const trigger = command(
    'trigger',
    'run the schedule now (also while paused): one plan, built by this command',
  )
    .argument('<name>', 'the schedule')
    .addOption(
      new Option(
        '--functions <module>',
        'check the spec’s function names against this module’s registry',
      ),
    );
  trigger.addHelpText('after', `\nPrints the plan's path (--json: { "tick", "plan", "state" }).`);
  setAction(trigger, async (scheduleName: string, options: ScheduleCliOptions) => {
    const functions =
      options.functions === undefined ? undefined : await loadFunctions(options.functions);
    const fired = await withZkPlan(
      options,
      (zkPlan) => zkPlan.schedules(checkParentPath(options.schedules)).trigger(scheduleName),
      functions === undefined ? {} : { functions },
    );
    if (options.json) printJson(fired);
    else print(fired.state === 'fired' ? fired.plan : `${fired.state}: ${fired.plan}`);
  });
}

async function change(
  zkPlan: ZkPlan,
  parent: string,
  action: 'pause' | 'resume' | 'rm',
  name: string,
): Promise<void> {
  const schedules = zkPlan.schedules(checkParentPath(parent));
  if (action === 'pause') await schedules.pause(name);
  else if (action === 'resume') await schedules.resume(name);
  else if (!(await schedules.remove(name)))
    throw new ScheduleNotFoundError(scheduleNodes(checkParentPath(parent), name).node);
}

function formatSummary({
  schedule,
  nextFireTimes,
  recentRuns,
  skippedTicks,
}: ScheduleSummary): string {
  const lines = [
    `${schedule.name}  ${schedule.cron} (${schedule.timezone})${schedule.paused ? '  PAUSED' : ''}  → ${schedule.planParent}  overlap ${schedule.overlap}, misfire ${schedule.misfire}`,
    `  next: ${nextFireTimes.slice(0, 3).join(', ') || '—'}${skippedTicks > 0 ? `  (${skippedTicks} missed tick(s) passed over)` : ''}`,
  ];
  for (const run of recentRuns.slice(0, 5))
    lines.push(
      `  ${run.firedAt}  ${run.kind.padEnd(6)}  ${run.state.padEnd(7)}  ${run.outcome ?? run.reason ?? ''}  ${run.plan}`,
    );
  return lines.join('\n');
}
