import { resolveBackoff, type BackoffOptions } from '../config/options.js';
import { InvalidArgumentError } from '../errors/usage-errors.js';

/**
 * The spec's `calc-sleep-time`: how long an idle worker sleeps after `count` empty rounds,
 * `initial × increase^count` capped at `max`. Users set the back-off through WorkerOptions; the
 * worker loop computes it.
 *
 * @internal
 */
export function calcSleepTime(attrs: BackoffOptions = {}, count: number): number {
  if (!Number.isInteger(count) || count < 0)
    throw new InvalidArgumentError('count', `expected a whole number ≥ 0, got ${String(count)}`);
  const { initial, increase, max } = resolveBackoff(attrs);
  if (initial === 0) return 0;
  // increase ** count may reach Infinity; min() then yields max, so a large count cannot overflow.
  return Math.min(initial * increase ** count, max);
}
