import { Option, type Command } from 'commander';
import { PlanFailedError } from '../../errors/plan-errors.js';
import { WaitTimeoutError } from '../../errors/usage-errors.js';
import type { PlanCounts } from '../../plan/plan-progress.js';
import type { PlanStatus } from '../../plan/plan-status.js';
import type { ZkPlan } from '../../zk-plan.js';
import { FAILED, TASK_PREFIX, hasSequentialName } from '../../zk/layout.js';
import type { Watcher } from '../../zk/zk-client-types.js';
import { followWithWatches, type WatchRead } from '../../zk/recipes/watch-loop.js';
import { setAction, withUsageHint } from '../action.js';
import { withZkPlan } from '../connection.js';
import { CliError, ExitCode, type ExitCodeValue } from '../exit-codes.js';
import {
  addConnectionOptions,
  checkPlanPath,
  integer,
  type ConnectionOptions,
} from '../options.js';
import { MAX_TIMER_MS } from '../../util/abort-signals.js';
import {
  formatDuration,
  formatTable,
  print,
  printError,
  printJson,
  shortName,
  shortenPaths,
  terminalWidth,
} from '../output.js';
import { createProgressReporter, type Progress, type ProgressReporter } from '../progress.js';
import { DEFAULTS } from '../../config/defaults.js';

interface WaitOptions extends ConnectionOptions {
  readonly timeoutMs?: number;
  readonly progress: boolean;
}

/** Progress reads at most this often (they follow a child watch on the plan, so only after a change). */
const MIN_READ_INTERVAL_MS = 500;
/** Pause before reading again after a connection problem. */
const RETRY_PAUSE_MS = 500;
/** After this long, wait checks once whether the plan has tasks no live worker can run, and says so (else it would wait silently). */
const NO_WORKER_CHECK_MS = 5_000;

/** `zk-plan wait <plan>`: follows a plan to its end with a progress bar (a TTY) or progress lines. */
export function registerWait(program: Command): void {
  const command = program
    .command('wait')
    .description(
      'wait until a plan completes (exit 0) or fails (exit 1, its failed tasks printed), showing progress',
    )
    .argument('<plan>', 'plan path, e.g. /plans/plan-0000000003')
    .addOption(
      new Option(
        '--timeout-ms <ms>',
        'give up (exit 3) after this long; default: no limit',
      ).argParser(integer(1)),
    )
    .addOption(new Option('--no-progress', 'no progress bar or progress lines on stderr'));
  addConnectionOptions(command, DEFAULTS.cliConnectTimeoutMs.read);
  command.addHelpText(
    'after',
    `
Progress goes to stderr: a bar (done/total, rate, ETA) when stderr is a terminal, else a line at most
once a second and a last one at the end. done/total counts every task of the plan, those done before
wait started included, as zk-plan plans and the web view do (from the plan's history, which every
plan keeps unless created with { history: false }); for a plan without history it shows the tasks
left and those finished while waiting.
The outcome goes to stdout; --json prints the plan's final status (the status of zk-plan show --json: its
counts include the done tasks) whatever the outcome.`,
  );
  withUsageHint(command);
  setAction(command, (plan: string, options: WaitOptions) => {
    checkPlanPath(plan);
    return withZkPlan(options, (zkPlan) => waitForPlan(zkPlan, plan, options));
  });
}

type Outcome =
  | { readonly kind: 'completed' }
  | { readonly kind: 'failed'; readonly error: PlanFailedError }
  | { readonly kind: 'timeout'; readonly error: WaitTimeoutError }
  | { readonly kind: 'interrupted'; readonly signal: string };

async function waitForPlan(
  zkPlan: ZkPlan,
  plan: string,
  options: WaitOptions,
): Promise<ExitCodeValue> {
  const startedAt = Date.now();
  const first = await zkPlan.plans.describe(plan); // PlanNotFoundError (exit 5) before anything is shown
  const tracker = new ProgressTracker(first.historyKept, first.status.counts);
  const reporter = options.progress
    ? createProgressReporter(shortName(plan), process.stderr)
    : undefined;
  reporter?.update(tracker.snapshot());

  const interrupt = new AbortController();
  const onSignal = (signal: NodeJS.Signals): void =>
    interrupt.abort(new CliError(`interrupted by ${signal}`, ExitCode.interrupted));
  process.once('SIGINT', onSignal).once('SIGTERM', onSignal);
  const stopWatching = new AbortController();
  const watching = followProgress(zkPlan, plan, tracker, reporter, stopWatching.signal);
  const noWorkerCheck = setTimeout(
    () => void warnIfNoWorker(zkPlan, plan, stopWatching.signal),
    NO_WORKER_CHECK_MS,
  );

  let outcome: Outcome;
  try {
    await zkPlan.waitForCompletion(plan, {
      timeoutMs: options.timeoutMs ?? MAX_TIMER_MS,
      signal: interrupt.signal,
    });
    outcome = { kind: 'completed' };
  } catch (error) {
    if (error instanceof PlanFailedError) outcome = { kind: 'failed', error };
    else if (error instanceof WaitTimeoutError) outcome = { kind: 'timeout', error };
    else if (interrupt.signal.aborted)
      outcome = { kind: 'interrupted', signal: (interrupt.signal.reason as Error).message };
    else {
      stopWatching.abort();
      reporter?.stop();
      throw error;
    }
  } finally {
    clearTimeout(noWorkerCheck);
    process.off('SIGINT', onSignal).off('SIGTERM', onSignal);
  }
  stopWatching.abort();
  await watching;

  // The last frame from a fresh read: the watch-driven reads above may be up to MIN_READ_INTERVAL_MS behind.
  const status = (await zkPlan.plans.describe(plan).catch(() => undefined))?.status;
  if (status) tracker.update(status.counts);
  if (outcome.kind === 'completed') tracker.completed();
  if (reporter) {
    reporter.update(tracker.snapshot());
    reporter.stop();
  }
  const elapsedMs = Date.now() - startedAt;
  if (options.json) {
    printJson(status ?? { plan, state: outcome.kind === 'completed' ? 'completed' : 'unknown' });
  } else {
    printOutcome(plan, outcome, status, tracker, elapsedMs);
  }
  switch (outcome.kind) {
    case 'completed':
      return ExitCode.ok;
    case 'failed':
      return ExitCode.failed;
    case 'timeout':
      return ExitCode.timeout;
    case 'interrupted':
      return ExitCode.interrupted;
  }
}

function printOutcome(
  plan: string,
  outcome: Outcome,
  status: PlanStatus | undefined,
  tracker: ProgressTracker,
  elapsedMs: number,
): void {
  switch (outcome.kind) {
    case 'completed': {
      const done = tracker.historyKept
        ? `${tracker.total} task(s) done`
        : `${tracker.doneSinceStart} task(s) finished while waiting (a plan without history)`;
      print(`${plan} completed: ${done}, waited ${formatDuration(elapsedMs)}`);
      return;
    }
    case 'failed': {
      const failed: PlanStatus['failed'] =
        status?.failed ??
        outcome.error.failedTasks.map(({ task, key, failure }) => ({
          task,
          ...(key !== undefined ? { key } : {}),
          failure: failure as PlanStatus['failed'][number]['failure'],
        }));
      const blocked: PlanStatus['blocked'] =
        status?.blocked ?? outcome.error.blockedTasks.map((task) => ({ task, reason: '' }));
      print(
        `${plan} failed: ${failed.length} task(s) failed for good, ${blocked.length} blocked behind them`,
      );
      // Tasks with keys (a spec's, or addTask's { key }) are named by them first, as `show` does.
      const keyed = failed.some(({ key }) => key !== undefined);
      print(
        formatTable(
          failed,
          [
            ...(keyed
              ? [
                  {
                    header: '  KEY',
                    value: ({ key }: PlanStatus['failed'][number]) => `  ${key ?? '-'}`,
                  },
                ]
              : []),
            {
              header: keyed ? 'TASK' : '  TASK',
              value: ({ task }) => `${keyed ? '' : '  '}${shortName(task)}`,
            },
            {
              header: 'ATTEMPTS',
              value: ({ failure }) => String(failure?.attempts ?? ''),
              right: true,
            },
            {
              header: 'ERROR',
              value: ({ failure }) =>
                failure
                  ? shortenPaths(`${failure.type}: ${failure.message}`, plan)
                  : 'no failure recorded',
            },
          ],
          terminalWidth(),
        ),
      );
      if (blocked.length > 0) {
        print(
          `  blocked: ${blocked.map(({ task, key, reason }) => `${key ?? shortName(task)}${reason ? ` (${shortenPaths(reason, plan)})` : ''}`).join(', ')}`,
        );
      }
      print(`Fix the cause, then 'zk-plan retry ${plan}' runs the failed tasks again.`);
      return;
    }
    case 'timeout': {
      const counts = status?.counts;
      const detail = counts
        ? ` (${counts.running} running, ${counts.runnable} runnable, ${counts.waiting} waiting${status.retrying.length ? `, ${status.retrying.length} retrying` : ''})`
        : '';
      printError(
        `zk-plan: timed out after ${formatDuration(outcome.error.timeoutMs)}: ${plan} still has ${counts?.remaining ?? outcome.error.remainingTasks} task(s)${detail}`,
      );
      return;
    }
    case 'interrupted':
      printError(
        `zk-plan: ${outcome.signal}: ${plan} is ${status?.state ?? 'in an unknown state'}, ${status?.counts.remaining ?? '?'} task(s) left`,
      );
      return;
  }
}

/**
 * Done/total as seen by `wait`: the plan's counts (plans.status), done ones from its history, so a
 * plan joined late shows what was done before; without history, only the tasks left are known, and
 * those that went away while it watched.
 */
class ProgressTracker {
  private readonly startedAt = Date.now();
  private readonly startDone: number;
  private done: number;
  public total: number;
  private failed: number;

  constructor(
    readonly historyKept: boolean,
    counts: PlanCounts,
  ) {
    this.done = historyKept ? counts.done : 0;
    this.total = historyKept ? counts.total : counts.remaining;
    this.failed = counts.failed;
    this.startDone = this.done;
  }

  /** From the plan's counts (plans.status or a plan view). */
  update(counts: PlanCounts): void {
    if (this.historyKept) this.fromView(counts.done, counts.total, counts.failed);
    else {
      this.remaining(counts.remaining);
      this.failedCount(counts.failed);
    }
  }

  get doneSinceStart(): number {
    return this.done - this.startDone;
  }

  /** Without history: `remaining` task-* nodes are left; each one fewer than last time is one more done. */
  remaining(remaining: number): void {
    const lastRemaining = this.total - this.done;
    if (remaining < lastRemaining) this.done += lastRemaining - remaining;
    this.total = this.done + remaining;
  }

  /** With history: the plan view's counts. */
  fromView(done: number, total: number, failed: number): void {
    this.done = done;
    this.total = total;
    this.failed = failed;
  }

  failedCount(failed: number): void {
    this.failed = failed;
  }

  completed(): void {
    this.done = this.total;
  }

  snapshot(): Progress {
    const elapsedMs = Date.now() - this.startedAt;
    return {
      done: this.done,
      total: this.total,
      failed: this.failed,
      doneSinceStart: this.doneSinceStart,
      elapsedMs,
      totalKnown: this.historyKept,
    };
  }
}

/**
 * Says, once, that tasks of the plan wait for a worker nobody runs (explain.plan's
 * NO_WORKER_FOR_FUNCTION): a plan of functions no live worker registers would otherwise be waited
 * on in silence until the timeout. A read that fails says nothing: the wait goes on as it was.
 */
async function warnIfNoWorker(zkPlan: ZkPlan, plan: string, stop: AbortSignal): Promise<void> {
  const explanation = await zkPlan.explain.plan(plan).catch(() => undefined);
  const stuck = explanation?.reasons.find((reason) => reason.code === 'NO_WORKER_FOR_FUNCTION');
  if (stuck === undefined || stop.aborted) return;
  const parent = plan.slice(0, plan.lastIndexOf('/')) || '/';
  printError(
    `zk-plan wait: ${stuck.tasks.length} task(s) of ${plan} cannot start: ${stuck.message}; start one with zk-plan worker --parent ${parent} --functions <module> (zk-plan why ${plan} tells more)`,
  );
}

/**
 * Re-arms a child watch on the plan and reads its progress after each change, at most every
 * MIN_READ_INTERVAL_MS: its status (counts with the done tasks of its history), or for a plan
 * without history the task-* count (and, once the plan has a `failed` marker, its status for the
 * failed count).
 */
async function followProgress(
  zkPlan: ZkPlan,
  plan: string,
  tracker: ProgressTracker,
  reporter: ProgressReporter | undefined,
  stop: AbortSignal,
): Promise<void> {
  const readProgress = async (onChange: Watcher): Promise<WatchRead<never>> => {
    const { children } = await zkPlan.zk.getChildren(plan, onChange);
    if (tracker.historyKept) {
      tracker.update((await zkPlan.plans.status(plan)).counts);
    } else {
      tracker.remaining(children.filter((name) => hasSequentialName(name, TASK_PREFIX)).length);
      tracker.failedCount(
        children.includes(FAILED) ? (await zkPlan.plans.status(plan)).counts.failed : 0,
      );
    }
    if (!stop.aborted) reporter?.update(tracker.snapshot());
    return { done: false };
  };
  // The plan went away, or a read failed for good: progress stops there, waitForCompletion reports the outcome.
  await followWithWatches(zkPlan.zk, readProgress, {
    stop,
    retryPauseMs: RETRY_PAUSE_MS,
    minIntervalMs: MIN_READ_INTERVAL_MS,
  }).catch(() => undefined);
}
