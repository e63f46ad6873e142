/**
 * Reading tasks' logs from ZooKeeper, from any process: `zkPlan.logs.read` (every try's record, or
 * one attempt's) and `zkPlan.logs.follow` (the lines as they are flushed, until the task is done).
 */
import { InvalidArgumentError } from '../errors/usage-errors.js';
import { PlanNotFoundError } from '../errors/plan-errors.js';
import {
  FAILED,
  TASK_PREFIX,
  assertValidPath,
  hasSequentialName,
  nameOf,
  parentOf,
} from '../zk/layout.js';
import type { Zk } from '../zk/zk.js';
import { sleepUnless } from '../util/abort-signals.js';
import type { TaskLogAttempt } from './attempt-log-record.js';
import { TaskLogStore } from './task-log-store.js';
import type { LogLine } from './task-log-types.js';
import { DEFAULTS } from '../config/defaults.js';

/**
 * Which tries of a task `taskLog` returns.
 *
 * @category Logs
 */
export interface TaskLogQuery {
  /** Only this attempt's tries (1 for the first). @defaultValue every attempt */
  readonly attempt?: number;
}

/**
 * Options of `followLog`: when to stop, and how often to read again.
 *
 * @category Logs
 */
export interface FollowLogOptions {
  /** Ends the iteration (it then returns quietly). */
  readonly signal?: AbortSignal;
  /** How often the log is read again while the task runs, in ms. @defaultValue DEFAULTS.followLogPollMs (250) */
  readonly pollMs?: number;
}

/**
 * A line yielded by `logs.follow`: the line, which try it belongs to, and its number in that try.
 *
 * @category Logs
 */
export interface FollowedLogLine extends LogLine {
  readonly attempt: number;
  readonly workerId: string;
  /** The line's number in its try, from 0: a jump says lines were dropped (the tail's bound) before they were read. */
  readonly index: number;
}

export class TaskLogReader {
  private readonly store: TaskLogStore;

  constructor(private readonly zk: Zk) {
    this.store = new TaskLogStore(zk);
  }

  /** Every try's log of `task` (or the tries of one attempt), oldest first. */
  async taskLog(task: string, query: TaskLogQuery = {}): Promise<TaskLogAttempt[]> {
    assertTaskPath(task);
    const attempt = checkedAttempt(query);
    const tries = (await this.store.read(task)).map(({ record }) => record);
    if (tries.length === 0) await this.assertPlanExists(task);
    return attempt === undefined ? tries : tries.filter((record) => record.attempt === attempt);
  }

  /**
   * The task's log lines as they are flushed (those already kept first), try after try, until the
   * task is done (its node gone: completed, or its plan deleted) or has failed for good, or
   * `signal` aborts.
   */
  async *followLog(
    task: string,
    options: FollowLogOptions = {},
  ): AsyncGenerator<FollowedLogLine, void, undefined> {
    assertTaskPath(task);
    const pollMs = options.pollMs ?? DEFAULTS.followLogPollMs;
    if (!Number.isInteger(pollMs) || pollMs < 10)
      throw new InvalidArgumentError(
        'pollMs',
        `expected a whole number of ms ≥ 10, got ${String(pollMs)}`,
      );
    if (options.signal !== undefined && !(options.signal instanceof AbortSignal))
      throw new InvalidArgumentError('signal', 'expected an AbortSignal');
    await this.assertPlanExists(task);
    const seen = new Map<string, number>(); // try name → number of the next line to yield
    for (;;) {
      if (options.signal?.aborted) return;
      // Whether it is over is read before the log: a task done by then flushed its last lines before (see TryLog.finish).
      const over = await this.isOver(task);
      const pending: FollowedLogLine[] = [];
      for (const { tryName, record } of await this.store.read(task)) {
        const next = seen.get(tryName) ?? 0;
        record.lines.forEach((line, offset) => {
          const index = record.firstIndex + offset;
          if (index >= next)
            pending.push({ ...line, attempt: record.attempt, workerId: record.workerId, index });
        });
        seen.set(tryName, record.firstIndex + record.lines.length);
      }
      yield* pending;
      if (over) return;
      await sleepUnless(pollMs, options.signal);
    }
  }

  private async isOver(task: string): Promise<boolean> {
    const listing = await this.zk.tryGetChildren(task);
    return listing === undefined || listing.children.includes(FAILED);
  }

  private async assertPlanExists(task: string): Promise<void> {
    const plan = parentOf(task);
    if ((await this.zk.exists(plan)) === undefined) throw new PlanNotFoundError(plan);
  }
}

function assertTaskPath(task: unknown): asserts task is string {
  assertValidPath('task', task);
  if (!hasSequentialName(nameOf(task), TASK_PREFIX)) {
    throw new InvalidArgumentError(
      'task',
      `"${task}" is not a task path (…/plan-N/task-N); zk-plan show <plan> lists a plan's tasks`,
      task,
    );
  }
}

function checkedAttempt(query: TaskLogQuery): number | undefined {
  if (typeof query !== 'object' || query === null)
    throw new InvalidArgumentError('options', 'expected { attempt? }');
  const { attempt } = query;
  if (attempt !== undefined && (!Number.isSafeInteger(attempt) || attempt < 1)) {
    throw new InvalidArgumentError(
      'attempt',
      `expected a whole number ≥ 1, got ${String(attempt)}`,
    );
  }
  return attempt;
}
