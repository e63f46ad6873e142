import { Option, type Command } from 'commander';
import { DEFAULTS } from '../../config/defaults.js';
import { describeMode, type JobDefinition } from '../../jobs/job-definition.js';
import { MAX_RUNS_READ, type JobRunHistory, type JobSummary } from '../../jobs/jobs.js';
import { setAction, withUsageHint } from '../action.js';
import { withZkPlan } from '../connection.js';
import { readDocument } from '../documents.js';
import {
  addConnectionOptions,
  checkParentPath,
  integer,
  type ConnectionOptions,
} from '../options.js';
import { print, printJson } from '../output.js';
import { printable } from '../../util/printable.js';
import type { LogLine } from '../../logs/task-log-types.js';

interface JobsCliOptions extends ConnectionOptions {
  readonly jobs: string;
}

/** `zk-plan jobs define|ls|show|runs|disable|enable|trigger|rm|disable-worker|enable-worker`: sharded jobs and work pools (src/jobs). */
export function registerJobs(program: Command): void {
  const jobs = program
    .command('jobs')
    .description(
      'sharded jobs and work pools: define, list, show, see the runs of, disable, enable, trigger and remove jobs, disable and enable job workers (run them with zk-plan worker --jobs)',
    );
  const command = (name: string, description: string): Command => {
    const sub = jobs
      .command(name)
      .description(description)
      .addOption(
        new Option('--jobs <path>', 'parent of the jobs').default(DEFAULTS.cliParents.jobs),
      );
    addConnectionOptions(sub, DEFAULTS.cliConnectTimeoutMs.read);
    withUsageHint(sub);
    return sub;
  };

  const define = command(
    'define',
    'create or replace a job from a JSON or YAML file { name, fn, workPool, mode, strategy?, disabled? }',
  ).argument('<file>', 'the job: JSON, or YAML when its name ends in .yaml or .yml');
  setAction(define, async (file: string, options: JobsCliOptions) => {
    const input = (await readDocument(file)) as JobDefinition;
    const stored = await withZkPlan(options, (zkPlan) =>
      zkPlan.jobs(checkParentPath(options.jobs)).define(input),
    );
    if (options.json) printJson(stored);
    else
      print(
        `defined ${stored.name}: ${stored.fn}, ${describeMode(stored.mode)}, ${stored.strategy}${stored.disabled ? ', disabled' : ''}`,
      );
  });

  const ls = command('ls', 'list the jobs: mode, strategy, items assigned per worker, problems');
  setAction(ls, async (options: JobsCliOptions) => {
    const summaries = await withZkPlan(options, (zkPlan) =>
      zkPlan.jobs(checkParentPath(options.jobs)).list(),
    );
    if (options.json) printJson(summaries);
    else if (summaries.length === 0) print(`no jobs under ${options.jobs}`);
    else for (const summary of summaries) print(formatLine(summary));
  });

  const show = command(
    'show',
    'one job: its definition, the assignment per worker with each item’s holder and fencing token',
  ).argument('<name>', 'the job');
  setAction(show, async (name: string, options: JobsCliOptions) => {
    const summary = await withZkPlan(options, async (zkPlan) => {
      const all = zkPlan.jobs(checkParentPath(options.jobs));
      await all.get(name); // JOB_NOT_FOUND naming the path
      return (await all.list()).find((job) => job.name === name);
    });
    if (options.json) printJson(summary);
    else if (summary !== undefined) print(formatShow(summary));
  });

  const runs = command(
    'runs',
    'the run history of a job, newest first: worker, items with their tokens, cause, try, start, duration, state and error; then each item’s last failure',
  )
    .argument('<name>', 'the job')
    .addOption(
      new Option('--limit <n>', `show at most n runs (1 to ${MAX_RUNS_READ})`)
        .argParser(integer(1, MAX_RUNS_READ))
        .default(DEFAULTS.jobs.keepRuns),
    )
    .option(
      '--log',
      'also print the lines each run wrote with ctx.log (the tail the task log store keeps of each)',
    );
  setAction(
    runs,
    async (
      name: string,
      options: JobsCliOptions & { readonly limit: number; readonly log?: boolean },
    ) => {
      const { limit } = options;
      const { history, logs } = await withZkPlan(options, async (zkPlan) => {
        const jobs = zkPlan.jobs(checkParentPath(options.jobs));
        const read = await jobs.runs(name, { limit });
        const lines =
          options.log === true
            ? await Promise.all(read.runs.map((run) => jobs.runLog(name, run.run)))
            : [];
        return {
          history: read,
          logs: new Map(read.runs.map((run, index) => [run.run, lines[index] ?? []])),
        };
      });
      if (options.json)
        printJson(options.log === true ? { ...history, logs: Object.fromEntries(logs) } : history);
      else print(formatRuns(history, options.log === true ? logs : undefined));
    },
  );

  for (const [name, verb, description] of [
    ['disable', 'disabled', 'assign no item of the job: running ones stop and are given back'],
    ['enable', 'enabled', 'assign the job’s items again'],
    [
      'trigger',
      'triggered',
      'a run now on every worker holding items of the job (everyMs and cron jobs)',
    ],
    [
      'rm',
      'removed',
      'disable the job, wait until no item is held, then delete it with its leases',
    ],
  ] as const) {
    const sub = command(name, description).argument('<name>', 'the job');
    setAction(sub, async (jobName: string, options: JobsCliOptions) => {
      await withZkPlan(options, async (zkPlan) => {
        const all = zkPlan.jobs(checkParentPath(options.jobs));
        if (name === 'disable') await all.disable(jobName);
        else if (name === 'enable') await all.enable(jobName);
        else if (name === 'trigger') await all.trigger(jobName);
        else await all.remove(jobName);
      });
      if (options.json) printJson({ job: jobName, state: verb });
      else print(`${verb} ${jobName}`);
    });
  }

  for (const [name, verb, description] of [
    [
      'disable-worker',
      'disabled',
      'take a live job worker out of every assignment without stopping it: its items move to the other workers, each once its run of it has ended',
    ],
    ['enable-worker', 'enabled', 'let the job worker be assigned items again'],
  ] as const) {
    const sub = command(name, description).argument(
      '<id>',
      'the job worker (zk-plan workers --jobs <path> lists the live ones)',
    );
    setAction(sub, async (id: string, options: JobsCliOptions) => {
      const changed = await withZkPlan(options, (zkPlan) => {
        const all = zkPlan.jobs(checkParentPath(options.jobs));
        return name === 'disable-worker' ? all.disableWorker(id) : all.enableWorker(id);
      });
      if (options.json) printJson({ worker: id, state: verb, changed });
      else print(changed ? `${verb} job worker ${id}` : `job worker ${id} was already ${verb}`);
    });
  }
}

/** Each line of `zk-plan jobs runs`: every value from a record made one printable line (a record is anyone's to write). */
function formatRuns(
  history: JobRunHistory,
  logs: ReadonlyMap<string, readonly LogLine[]> | undefined,
): string {
  const one = (value: unknown): string => printable(String(value), { multiline: false });
  const { counts } = history;
  const lines = [
    `${history.job}: ${counts.runs} run(s) shown, ${counts.failed} failed, ${counts.interrupted} interrupted, ${counts.misfires} misfire(s) (${counts.caughtUp} caught up), ${counts.failovers} failover(s), ${counts.retries} retry(ies)`,
  ];
  if (history.runs.length > 0)
    lines.push('  STARTED                   STATE        CAUSE       TRY  TOOK      WORKER  ITEMS');
  for (const run of history.runs) {
    const took =
      run.finishedAt === undefined
        ? '-'
        : `${Date.parse(run.finishedAt) - Date.parse(run.startedAt)} ms`;
    const items = run.items.map((item) => `${one(item.id)}#${item.token}`);
    const shown = `${items.slice(0, 6).join(' ')}${items.length > 6 ? ` +${items.length - 6}` : ''}`;
    lines.push(
      `  ${one(run.startedAt)}  ${run.state.padEnd(11)}  ${run.cause.padEnd(10)}  ${String(run.attempt).padEnd(3)}  ${took.padEnd(8)}  ${one(run.worker)}  ${shown}`,
    );
    if (run.failoverOf !== undefined) lines.push(`      runs again ${one(run.failoverOf)}`);
    if (run.misfire !== undefined)
      lines.push(
        `      a tick came while it ran (${one(run.misfire.tick)}): ${run.misfire.handling}`,
      );
    // The task log store's lines (flushed while the run ran), else those its end kept.
    const kept = logs?.get(run.run) ?? [];
    if (logs !== undefined && kept.length > 0)
      for (const line of kept)
        lines.push(`      ${line.time.toISOString()} ${line.level.toUpperCase()} ${one(line.msg)}`);
    else if (logs !== undefined)
      for (const line of run.log ?? [])
        lines.push(`      ${one(line.at)} ${line.level.toUpperCase()} ${one(line.msg)}`);
    if (run.error !== undefined)
      lines.push(
        `      ${one(run.error.type)}${run.error.code === undefined ? '' : ` ${one(run.error.code)}`}: ${one(run.error.message)}`,
      );
  }
  const failures = Object.entries(history.lastFailures);
  if (failures.length > 0) lines.push('  last failure per item:');
  for (const [item, failure] of failures)
    lines.push(
      `    ${one(item)}#${failure.token}  ${one(failure.finishedAt)}  try ${failure.attempt} on ${one(failure.worker)}: ${one(failure.error.message)}`,
    );
  return lines.join('\n');
}

function formatLine(job: JobSummary): string {
  const workers = Object.entries(job.assignment).filter(([, items]) => items.length > 0);
  const spread = workers.map(([worker, items]) => `${worker}:${items.length}`).join(' ');
  const state = job.disabled
    ? 'disabled'
    : job.problem !== undefined
      ? `problem: ${job.problem}`
      : `${workers.length} worker(s)`;
  const unassigned = job.unassigned.length > 0 ? `, ${job.unassigned.length} unassigned` : '';
  return `${job.name}  ${job.fn}  ${describeMode(job.mode)}  ${job.strategy}  ${state}${unassigned}${spread ? `  ${spread}` : ''}`;
}

function formatShow(job: JobSummary): string {
  const pool =
    'items' in job.workPool
      ? `${job.workPool.items.length} items`
      : `${job.workPool.shards} shards`;
  const lines = [
    `${job.name}: ${job.fn}, ${describeMode(job.mode)}, ${job.strategy}, ${pool}${job.disabled ? ', disabled' : ''}`,
    ...(job.problem !== undefined ? [`  problem: ${job.problem}`] : []),
  ];
  for (const [worker, items] of Object.entries(job.assignment).sort()) {
    const held = items.map((item) => {
      const lease = job.leases[item];
      return lease === undefined || lease.holder !== worker || lease.released
        ? `${item} (taking)`
        : `${item}#${lease.token}`;
    });
    lines.push(`  ${worker}: ${held.join(' ') || '-'}`);
  }
  if (job.unassigned.length > 0) lines.push(`  unassigned: ${job.unassigned.join(' ')}`);
  return lines.join('\n');
}
