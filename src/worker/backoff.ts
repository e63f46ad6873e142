import { resolveBackoff, type BackoffOptions } from '../config/options.js';
import { InvalidArgumentError } from '../errors/usage-errors.js';

/**
 * The spec's `calc-sleep-time`: how long an idle worker sleeps after `count` empty rounds,
 * `initial × increase^count` capped at `max`. The cap is applied at every step, so a large
 * count cannot overflow.
 */
export function calcSleepTime(attrs: BackoffOptions = {}, count: number): number {
  if (!Number.isInteger(count) || count < 0) throw new InvalidArgumentError('count', `expected a whole number ≥ 0, got ${String(count)}`);
  const { initial, increase, max } = resolveBackoff(attrs);
  let sleep = Math.min(initial, max);
  for (let round = 0; round < count && sleep < max; round++) sleep = Math.min(sleep * increase, max);
  return sleep;
}
