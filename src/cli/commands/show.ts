import type { Command } from 'commander';
import { InvalidArgumentError } from '../../errors/usage-errors.js';
import type { PlanView, TaskView } from '../../plan/plan-view.js';
import { setAction, withUsageHint } from '../action.js';
import { withZkPlan } from '../connection.js';
import { addConnectionOptions, checkPlanPath, type ConnectionOptions } from '../options.js';
import {
  formatCall,
  formatDuration,
  formatTable,
  formatTime,
  print,
  printJson,
  shortName,
  shortenPaths,
  terminalWidth,
  type Column,
} from '../output.js';
import { DEFAULTS } from '../../config/defaults.js';
import { renderTimeline } from '../timeline-text.js';

/** `show`'s own options, beside the connection's. */
interface ShowOptions extends ConnectionOptions {
  readonly timeline?: boolean;
  readonly byWorker?: boolean;
}

/** `zk-plan show <plan>`: every task with its state, inputs and attempts. */
export function registerShow(program: Command): void {
  const command = program
    .command('show')
    .description(
      'show the tasks of a plan: state (and who runs it, why it failed or is blocked), inputs, attempts',
    )
    .argument('<plan>', 'plan path, e.g. /plans/plan-0000000003')
    .option(
      '--timeline',
      "print the plan's run as a timeline: a line per task, a bar per try, the critical path marked",
    )
    .option('--by-worker', 'with --timeline: a line per worker instead of one per task');
  addConnectionOptions(command, DEFAULTS.cliConnectTimeoutMs.read);
  command.addHelpText(
    'after',
    `
Task states: building (being written), waiting (for inputs), runnable, retrying (after a failed try),
running (and by whom), finishing (result stored, being handed on), done, failed (with its error),
blocked (can never run, with the reason); in a cancelled plan also cancelled (it was running or
ready to run) and unstarted (it never started). Done, cancelled and unstarted tasks come from the
plan's history, which every plan keeps unless created with { history: false }.
Names are short: task-12 is <plan>/task-0000000012. KEY is the task's key (its spec's, or the key it
was added with), when tasks have keys. The plan's name, when it has one, follows its path. ATTEMPTS counts failed tries. WORKER, STARTED,
ENDED and TOOK: who ran (or runs) the task's last try, when it started and ended, how long it took.
--json prints the plan view: { plan, status, tasks, done, historyKept, createdAt, finishedAt }; each task's tries are in its "tries".
--timeline draws each try as a bar scaled to the terminal's width (# done, / skipped, x failed,
> running, - cancelled), the tasks on the critical path (the chain of inputs whose run times add
up to the most) marked *; --by-worker draws a line per worker instead.`,
  );
  withUsageHint(command);
  setAction(command, async (plan: string, options: ShowOptions) => {
    checkPlanPath(plan);
    if (options.byWorker === true && options.timeline !== true)
      throw new InvalidArgumentError(
        '--by-worker',
        `it lays out the timeline: run zk-plan show ${plan} --timeline --by-worker`,
      );
    const view = await withZkPlan(options, (zkPlan) => zkPlan.plans.describe(plan));
    if (options.json) {
      printJson(view);
      return;
    }
    if (options.timeline === true) {
      print(
        renderTimeline(view, {
          width: terminalWidth(),
          byWorker: options.byWorker === true,
          now: Date.now(),
        }),
      );
      return;
    }
    print(renderPlanView(view, terminalWidth()));
  });
}

/** The header line and the task table of `show`. */
export function renderPlanView(view: PlanView, width?: number): string {
  const { status } = view;
  const counts = status.counts;
  const parts = [
    view.historyKept ? `${counts.done} done` : undefined,
    counts.running ? `${counts.running} running` : undefined,
    counts.finishing ? `${counts.finishing} finishing` : undefined,
    counts.runnable ? `${counts.runnable} runnable` : undefined,
    counts.waiting ? `${counts.waiting} waiting` : undefined,
    counts.building ? `${counts.building} building` : undefined,
    status.retrying.length ? `${status.retrying.length} retrying` : undefined,
    counts.failed ? `${counts.failed} failed` : undefined,
    counts.blocked ? `${counts.blocked} blocked` : undefined,
    counts.cancelled ? `${counts.cancelled} cancelled` : undefined,
    counts.unstarted ? `${counts.unstarted} unstarted` : undefined,
  ].filter((part): part is string => part !== undefined);
  const header = `${view.plan}${status.name !== undefined ? ` (${status.name})` : ''}: ${status.state}, ${view.historyKept ? counts.total : counts.remaining} task(s)${view.historyKept ? '' : ' left'}${parts.length ? `: ${parts.join(', ')}` : ''}${
    status.failurePolicy === 'failFast' ? ' (failFast)' : ''
  }${status.subPlanOf === undefined ? '' : `\nsub-plan of task ${status.subPlanOf}`}`;
  if (view.tasks.length === 0)
    return `${header}\n${view.historyKept ? 'no tasks' : 'no tasks left (the plan was created with { history: false }: finished tasks are not listed)'}`;
  return `${header}\n${formatTable(
    view.tasks,
    taskColumns(
      view.plan,
      view.tasks.some((task) => task.key !== undefined),
      new Map(
        view.tasks.flatMap((task) => (task.key === undefined ? [] : [[task.task, task.key]])),
      ),
    ),
    width,
  )}`;
}

/**
 * With `keys` (a plan from a spec, or tasks added with keys): a KEY column first, each task's key;
 * `keyOf` names the tasks a detail mentions (a continuation) by their keys.
 */
function taskColumns(
  plan: string,
  keys: boolean,
  keyOf: ReadonlyMap<string, string>,
): Column<TaskView>[] {
  return [
    ...(keys ? [{ header: 'KEY', value: (task: TaskView) => task.key ?? '-' }] : []),
    { header: 'TASK', value: (task) => shortName(task.name) },
    { header: 'STATE', value: (task) => task.state },
    { header: 'CALL', value: (task) => formatCall(task.fn, task.params, 32) },
    {
      header: 'INPUTS',
      value: (task) => (task.inputs.length ? task.inputs.map(shortName).join(',') : '-'),
    },
    { header: 'ATTEMPTS', value: (task) => String(task.failedTries ?? ''), right: true },
    { header: 'WORKER', value: (task) => task.workerId ?? '-' },
    { header: 'STARTED', value: (task) => (task.startedAt ? formatTime(task.startedAt) : '-') },
    { header: 'ENDED', value: (task) => (task.finishedAt ? formatTime(task.finishedAt) : '-') },
    {
      header: 'TOOK',
      value: (task) => (task.durationMs !== undefined ? formatDuration(task.durationMs) : '-'),
      right: true,
    },
    {
      header: 'DETAIL',
      value: (task) => shortenPaths(withChildPlan(task, detailOf(task, Date.now(), keyOf)), plan),
    },
  ];
}

/** A sub-plan task's detail names its child plan (`zk-plan show <child>` shows it). */
function withChildPlan(task: TaskView, detail: string): string {
  if (task.subPlan === undefined) return detail;
  return `${detail === '-' ? '' : `${detail}; `}child plan ${task.subPlan}`;
}

/** What to say about a task in its state; `keyOf` names other tasks by their keys where they have one. */
export function detailOf(
  task: TaskView,
  now = Date.now(),
  keyOf: ReadonlyMap<string, string> = new Map(),
): string {
  const continuation =
    task.continuedBy === undefined ? undefined : (keyOf.get(task.continuedBy) ?? task.continuedBy);
  switch (task.state) {
    case 'building':
      return 'being written';
    case 'waiting':
      return continuation !== undefined && task.pendingInputs === 0
        ? `handed over to ${continuation}: completes with its result`
        : `waiting for ${task.pendingInputs} of ${task.inputs.length || task.pendingInputs} input(s)`;
    case 'runnable':
      // Its function said "not yet" (ctx.notYet, a dependent task): why, and when it looks again.
      if (task.waiting !== undefined)
        return `waits: ${task.waiting.reason} (check ${task.waiting.checks}; next ${task.waiting.nextCheckAt.getTime() <= now ? 'now' : `at ${formatTime(task.waiting.nextCheckAt)}`})`;
      return task.attempts
        ? `runnable again; last error: ${task.attempts.lastError}`
        : 'ready to run';
    case 'retrying':
      return task.attempts
        ? `next try ${task.attempts.nextTryAt.getTime() <= now ? 'now' : `at ${formatTime(task.attempts.nextTryAt)}`}; last error: ${task.attempts.lastError}`
        : 'waiting for its next try';
    case 'running':
      return task.owner
        ? `by ${task.owner.workerId} for ${formatDuration(now - task.owner.claimedAt.getTime())}`
        : 'running';
    case 'finishing':
      return 'result stored, being handed on';
    case 'done':
      return withOmitted(
        task,
        continuation !== undefined
          ? `handed over to ${continuation}: completed with its result`
          : task.workerId === undefined
            ? 'its worker stopped after storing the result; another handed it on'
            : '-',
      );
    case 'skipped':
      return withOmitted(task, `skipped: ${task.skipped ?? 'no reason recorded'}`);
    case 'failed':
      return withOmitted(
        task,
        task.failure
          ? `${task.failure.type}: ${task.failure.message}`
          : 'failed (no failure recorded)',
      );
    case 'blocked':
      return task.blockedReason ?? 'blocked';
    case 'cancelled':
      return withOmitted(
        task,
        `cancelled while ${CANCELLED_WHILE[task.was ?? 'runnable'] ?? 'it could run'}${cancelledAt(task)}`,
      );
    case 'unstarted':
      return withOmitted(
        task,
        `never started: ${CANCELLED_WHILE[task.was ?? 'waiting'] ?? 'it waited'} when its plan was cancelled${cancelledAt(task)}`,
      );
  }
}

/** Where a task of a cancelled plan stood, in words. */
const CANCELLED_WHILE: Readonly<Record<string, string>> = {
  running: 'running',
  finishing: 'handing on its stored result',
  runnable: 'ready to run',
  retrying: 'waiting for its next try',
  waiting: 'it waited for inputs',
  blocked: 'it could never run (an input failed)',
  building: 'it was still being written',
};

function cancelledAt(task: TaskView): string {
  return task.cancelledAt ? ` (at ${formatTime(task.cancelledAt)})` : '';
}

function withOmitted(task: TaskView, detail: string): string {
  return task.omitted
    ? `${detail}; params and inputs not kept (its record was over one znode)`
    : detail;
}
