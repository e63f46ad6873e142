import { Option, type Command } from 'commander';
import { DEFAULTS } from '../../config/defaults.js';
import { ScheduleNotFoundError } from '../../errors/schedule-errors.js';
import type { ZkPlan } from '../../zk-plan.js';
import type { ScheduleInput } from '../../schedule/schedule-definition.js';
import type { ScheduleSummary } from '../../schedule/schedules.js';
import type { BackfillStatus } from '../../backfill/backfill-options.js';
import { InvalidArgumentError } from '../../errors/usage-errors.js';
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

interface BackfillCliOptions extends ScheduleCliOptions {
  readonly from: string;
  readonly to: string;
  readonly parallel?: string;
}

/** `zk-plan schedule put|ls|pause|resume|trigger|rm|backfill|backfills|cancel-backfill`: cron-timed plans (src/schedule, src/backfill). */
export function registerSchedule(program: Command): void {
  const schedule = program
    .command('schedule')
    .description(
      'cron-timed plans: put, list, pause, resume, trigger, backfill and remove schedules (run them with zk-plan worker --schedules)',
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

  const backfill = command(
    'backfill',
    'fire the schedule for each of its cron ticks in a past range, one plan per tick (serial unless --parallel)',
  )
    .argument('<name>', 'the schedule')
    .requiredOption(
      '--from <time>',
      'first moment of the range: ISO-8601 (2026-11-01T00:00:00Z) or ms',
    )
    .requiredOption('--to <time>', 'last moment of the range, at most now: ISO-8601 or ms')
    .option(
      '--parallel <n>',
      'run up to n tick plans at once (1 to 100) instead of one after another',
    );
  backfill.addHelpText(
    'after',
    `\nA tick whose record or plan exists already (a live tick, an earlier backfill) makes nothing new.\nRunning schedulers (zk-plan worker --schedules) fire the ticks; the schedule's pause does not stop them.`,
  );
  setAction(backfill, async (scheduleName: string, options: BackfillCliOptions) => {
    const status = await withZkPlan(options, (zkPlan) =>
      zkPlan.schedules(checkParentPath(options.schedules)).backfill(scheduleName, {
        from: timeOption(options.from),
        to: timeOption(options.to),
        ...(options.parallel === undefined
          ? {}
          : {
              mode: 'parallel' as const,
              concurrency: countOption('--parallel', options.parallel),
            }),
      }),
    );
    if (options.json) printJson(status);
    else
      print(
        `backfill ${status.id}: ${status.total} tick(s) of ${scheduleName} from ${status.from} to ${status.to}, ${status.mode === 'serial' ? 'one at a time' : `up to ${status.concurrency} at a time`}; started ${status.started} (schedulers under ${options.schedules} fire them: zk-plan worker --schedules ${options.schedules})`,
      );
  });

  const backfills = command(
    'backfills',
    "list a schedule's backfills with their progress",
  ).argument('<name>', 'the schedule');
  setAction(backfills, async (scheduleName: string, options: ScheduleCliOptions) => {
    const statuses = await withZkPlan(options, (zkPlan) =>
      zkPlan.schedules(checkParentPath(options.schedules)).backfills(scheduleName),
    );
    if (options.json) printJson(statuses);
    else if (statuses.length === 0) print(`no backfills of ${scheduleName}`);
    else for (const status of statuses) print(formatBackfill(status));
  });

  const cancelBackfill = command(
    'cancel-backfill',
    'stop a backfill: no tick of it starts again, and the plans of its ticks under way are cancelled',
  )
    .argument('<name>', 'the schedule')
    .argument('<id>', 'the backfill (zk-plan schedule backfills <name> lists them)')
    .option('--reason <text>', 'why, kept with the backfill');
  setAction(
    cancelBackfill,
    async (scheduleName: string, id: string, options: ScheduleCliOptions & { reason?: string }) => {
      const status = await withZkPlan(options, (zkPlan) =>
        zkPlan
          .schedules(checkParentPath(options.schedules))
          .cancelBackfill(scheduleName, id, options.reason),
      );
      if (options.json) printJson(status);
      else print(formatBackfill(status));
    },
  );
}

/** A time option: ms since the epoch when all digits, else the text (ISO-8601), which the API checks. */
function timeOption(value: string): string | number {
  return /^\d+$/.test(value) ? Number(value) : value;
}

/** A whole-number option; a usage error naming the option otherwise. */
function countOption(name: string, value: string): number {
  if (!/^\d+$/.test(value))
    throw new InvalidArgumentError(name, `expected a whole number, got ${JSON.stringify(value)}`);
  return Number(value);
}

function formatBackfill(status: BackfillStatus): string {
  const ended = status.completed + status.failed + status.notRun;
  const pace = status.mode === 'serial' ? 'serial' : `parallel ${status.concurrency}`;
  const lines = [
    `${status.id}  ${status.state.toUpperCase()}  ${status.from} … ${status.to}  ${pace}  ${ended}/${status.total} ended: ${status.completed} completed, ${status.failed} failed, ${status.notRun} not run${status.reason === undefined ? '' : `  (${status.reason})`}`,
  ];
  if (status.running.length > 0) lines.push(`  under way: ${status.running.join(', ')}`);
  return lines.join('\n');
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
  backfills,
}: ScheduleSummary): string {
  const lines = [
    `${schedule.name}  ${schedule.cron} (${schedule.timezone})${schedule.paused ? '  PAUSED' : ''}  → ${schedule.planParent}  overlap ${schedule.overlap}, misfire ${schedule.misfire}`,
    `  next: ${nextFireTimes.slice(0, 3).join(', ') || '—'}${skippedTicks > 0 ? `  (${skippedTicks} missed tick(s) passed over)` : ''}`,
  ];
  for (const run of recentRuns.slice(0, 5))
    lines.push(
      `  ${run.firedAt}  ${run.kind.padEnd(8)}  ${run.state.padEnd(7)}  ${run.outcome ?? run.reason ?? ''}  ${run.plan}`,
    );
  for (const backfill of backfills.filter((status) => status.state === 'running'))
    lines.push(
      `  backfill ${backfill.id}: ${backfill.completed + backfill.failed + backfill.notRun}/${backfill.total} ended, ${backfill.running.length} under way`,
    );
  return lines.join('\n');
}
