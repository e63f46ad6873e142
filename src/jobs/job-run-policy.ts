/**
 * When a job's runs happen (pure): the next due time of a mode, the ticks a run missed while it
 * ran (misfire), and the pause before a failed run is tried again.
 */
import { cronTimes } from '../schedule/cron-times.js';
import type { JobMode } from './job-definition.js';

/** A mode with due times: `{ everyMs }` or `{ cron }`. */
export type TimedMode = Exclude<JobMode, 'continuous'>;

/** The first due time after `after`; undefined when a cron expression never fires again. */
export function nextDueTime(mode: TimedMode, after: number): number | undefined {
  if ('everyMs' in mode) return after + mode.everyMs;
  return cronTimes(mode.cron, mode.timezone ?? 'UTC', 'job').next(after);
}

/**
 * The latest due time in [`firstMissed`, `now`], where `firstMissed` is a due time that came while
 * a run ran: however many came, a misfire catches up once, for the latest.
 */
export function latestTickUpTo(mode: TimedMode, firstMissed: number, now: number): number {
  if ('everyMs' in mode)
    return firstMissed + Math.floor((now - firstMissed) / mode.everyMs) * mode.everyMs;
  const { ticks } = cronTimes(mode.cron, mode.timezone ?? 'UTC', 'job').latestIn(
    firstMissed,
    now,
    1,
  );
  return ticks[0] ?? firstMissed;
}

/**
 * The pause before the next try after `failuresInARow` failed runs: `baseMs` after the first,
 * doubling after each one more, at most `maxMs`.
 */
export function retryDelayMs(failuresInARow: number, baseMs: number, maxMs: number): number {
  if (failuresInARow <= 0) return 0;
  const doublings = Math.min(failuresInARow - 1, 30);
  return Math.min(maxMs, baseMs * 2 ** doublings);
}
