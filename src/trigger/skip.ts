/**
 * `return skip(reason)`: a task function's way to say that its task has nothing to do. The task
 * completes as skipped, and so do, in turn, the tasks that wait for it under the default trigger
 * rule; tasks with another rule receive `{ status: 'skipped', reason }`.
 */
import { InvalidArgumentError } from '../errors/usage-errors.js';

/** The longest skip reason kept (a longer one is cut). */
export const MAX_SKIP_REASON = 500;

/**
 * Marks a skip across copies of zk-plan: a functions module may load another copy than the
 * worker's (a bundled one, a second install), whose class is not the worker's, so `instanceof`
 * alone would miss it.
 */
const SKIP_MARK = Symbol.for('zk-plan.skip');

/**
 * What `skip(reason)` returns: the function's "nothing to do", for the worker. Only the returned
 * value counts.
 *
 * @category Plans and tasks
 */
export class Skip {
  /** @internal Made by `skip`. */
  constructor(
    /** Why the task is skipped: kept in its history, shown by `show` and the web view. */
    readonly reason: string,
  ) {
    Object.defineProperty(this, SKIP_MARK, { value: true });
  }
}

/** The skip a function returned, from this copy of zk-plan or another; undefined for every other value. */
export function asSkip(value: unknown): Skip | undefined {
  if (typeof value !== 'object' || value === null || !(SKIP_MARK in value)) return undefined;
  const { reason } = value as { reason?: unknown };
  return typeof reason === 'string' ? new Skip(reason.slice(0, MAX_SKIP_REASON)) : undefined;
}

/**
 * Returned by a task function: its task completes as skipped, with `reason`, and its dependents
 * under the default trigger rule are skipped in turn.
 *
 * ```ts
 * functions.register('load', async (ctx, rows: Row[]) => {
 *   if (rows.length === 0) return skip('no new rows today');
 *   return await load(rows);
 * });
 * ```
 *
 * @category Plans and tasks
 */
export function skip(reason: string): Skip {
  if (typeof reason !== 'string' || reason.trim() === '')
    throw new InvalidArgumentError(
      'reason',
      'skip(reason) takes a text saying why the task has nothing to do',
    );
  return new Skip(reason.slice(0, MAX_SKIP_REASON));
}
