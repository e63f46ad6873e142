/**
 * `return ctx.notYet(reason, { afterMs })`: what a task function returns when what it waits for
 * does not hold yet (a file not there, another plan not finished). The worker gives the task back
 * without charging an attempt, records why it waits, and offers it again after `afterMs`: no
 * worker is held while it waits (Airflow's sensors in "reschedule" mode).
 */
import { DEFAULTS } from '../config/defaults.js';
import { InvalidArgumentError } from '../errors/usage-errors.js';

/** The longest wait reason kept (a longer one is cut). */
export const MAX_WAIT_REASON = 500;
/** The longest a task may ask to wait before it is looked at again: an hour. */
export const MAX_NOT_YET_MS = 60 * 60 * 1000;
/** The shortest: a task checked more often than this would only load ZooKeeper. */
export const MIN_NOT_YET_MS = 10;

/**
 * Options of `ctx.notYet`.
 *
 * @category Plans and tasks
 */
export interface NotYetOptions {
  /** When to run the task again, in ms from now: 10 ms to an hour. @defaultValue DEFAULTS.notYetAfterMs (5 000) */
  readonly afterMs?: number;
}

/**
 * What `ctx.notYet` returns: the function's "not yet", for the worker. Only the returned value
 * counts.
 *
 * @category Plans and tasks
 */
export class NotYet {
  /** @internal Made by `ctx.notYet`. */
  constructor(
    /** The task whose function said it (a value returned by another task's function is refused). */
    readonly task: string,
    /** Why the task waits: shown by `why`, the task's history and the web view. */
    readonly reason: string,
    /** When to run it again, in ms from now. */
    readonly afterMs: number,
  ) {}
}

/** `ctx.notYet(reason, options)` of `task`, checked: InvalidArgumentError naming the task otherwise. */
export function makeNotYet(task: string, reason: unknown, options: NotYetOptions = {}): NotYet {
  if (typeof reason !== 'string' || reason.trim() === '')
    throw new InvalidArgumentError(
      'reason',
      `ctx.notYet of task ${task}: expected a text saying what the task waits for`,
      task,
    );
  const afterMs = checkWaitMs(
    'afterMs',
    options?.afterMs ?? DEFAULTS.notYetAfterMs,
    `ctx.notYet of task ${task}`,
    task,
  );
  return new NotYet(task, reason.slice(0, MAX_WAIT_REASON), afterMs);
}

/**
 * A time to wait before a task is looked at again (`ctx.notYet`'s `afterMs`, a dependent's or a
 * sub-plan's `checkEveryMs`): a whole number of ms from 10 ms to an hour; InvalidArgumentError
 * naming `where` (and `task`, when there is one) otherwise.
 */
export function checkWaitMs(name: string, value: unknown, where: string, task?: string): number {
  if (
    typeof value !== 'number' ||
    !Number.isInteger(value) ||
    value < MIN_NOT_YET_MS ||
    value > MAX_NOT_YET_MS
  )
    throw new InvalidArgumentError(
      name,
      `${where}: expected a whole number of ms from ${MIN_NOT_YET_MS} to ${MAX_NOT_YET_MS}, got ${String(value)}`,
      task,
    );
  return value;
}
