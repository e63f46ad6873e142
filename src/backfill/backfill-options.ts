/**
 * `schedules(parent).backfill(name, options)`: the options, checked and resolved against the
 * schedule (pure, given the clock), and the status a backfill is shown as.
 */
import { assertKnownKeys } from '../config/option-checks.js';
import { InvalidArgumentError } from '../errors/usage-errors.js';
import { cronTimes } from '../schedule/cron-times.js';
import type { StoredSchedule } from '../schedule/schedule-definition.js';
import { DEFAULTS } from '../config/defaults.js';
import {
  MAX_TIME_MS,
  MAX_BACKFILL_CONCURRENCY,
  MAX_BACKFILL_TICKS,
  type BackfillMode,
  type BackfillRecord,
  type BackfillState,
} from './backfill-record.js';

/**
 * Options of `schedules(parent).backfill(name, options)`.
 *
 * @category Schedules
 */
export interface BackfillOptions {
  /** The range's first moment: a Date, an ISO-8601 string or ms since the epoch. Ticks at it count. */
  readonly from: Date | string | number;
  /** The range's last moment, at most now (later ticks are the live scheduler's). Ticks at it count. */
  readonly to: Date | string | number;
  /** One tick plan at a time, each after the previous one ended, or several at once. @defaultValue DEFAULTS.backfill.mode ('serial') */
  readonly mode?: BackfillMode;
  /** Tick plans at most under way at once when `parallel`, from 1 to 100 (must be 1, or left out, when `serial`). @defaultValue DEFAULTS.backfill.parallelConcurrency (4) when parallel, 1 when serial */
  readonly concurrency?: number;
}

const KEYS: Record<keyof BackfillOptions, true> = {
  from: true,
  to: true,
  mode: true,
  concurrency: true,
};

/** The resolved range and pace of a new backfill. */
export interface ResolvedBackfill {
  readonly from: number;
  readonly to: number;
  readonly mode: BackfillMode;
  readonly concurrency: number;
  /** Cron ticks of the schedule in [from, to]. */
  readonly total: number;
}

function moment(argument: 'from' | 'to', value: unknown): number {
  const ms =
    value instanceof Date
      ? value.getTime()
      : typeof value === 'string'
        ? Date.parse(value)
        : typeof value === 'number'
          ? value
          : Number.NaN;
  if (!Number.isSafeInteger(ms) || ms < 0 || ms > MAX_TIME_MS)
    throw new InvalidArgumentError(
      argument,
      `expected a Date, an ISO-8601 time such as "2026-11-01T00:00:00Z" or ms since the epoch, got ${JSON.stringify(value) ?? String(value)}`,
    );
  return ms;
}

/**
 * Checks `options` for `schedule` at `now`: a range within the past that holds at least one and
 * at most MAX_BACKFILL_TICKS cron ticks, a known mode, and a concurrency that fits it.
 * `liveFrom`: ticks after it are the live scheduler's to decide (those after its cursor, when the
 * schedule is active): the range must end at or before it. InvalidArgumentError naming the option
 * and what to do otherwise.
 */
export function resolveBackfillOptions(
  options: BackfillOptions,
  schedule: StoredSchedule,
  now: number,
  liveFrom: number,
): ResolvedBackfill {
  if (typeof options !== 'object' || options === null)
    throw new InvalidArgumentError('options', 'expected { from, to, mode?, concurrency? }');
  assertKnownKeys('backfill', options, KEYS);
  const from = moment('from', options.from);
  const to = moment('to', options.to);
  if (from > to)
    throw new InvalidArgumentError(
      'from',
      `${new Date(from).toISOString()} is after to (${new Date(to).toISOString()})`,
    );
  if (to > now)
    throw new InvalidArgumentError(
      'to',
      `${new Date(to).toISOString()} is in the future: a backfill covers past ticks (the scheduler fires the later ones); give a time up to now`,
    );
  if (to > liveFrom)
    throw new InvalidArgumentError(
      'to',
      `${new Date(to).toISOString()} is after ${new Date(liveFrom).toISOString()}, the last tick the schedule's scheduler has decided: later ticks are its own to fire (give a to up to then, or wait for a scheduler pass)`,
    );
  const mode = options.mode ?? DEFAULTS.backfill.mode;
  if (mode !== 'serial' && mode !== 'parallel')
    throw new InvalidArgumentError(
      'mode',
      `expected 'serial' or 'parallel', got ${JSON.stringify(mode)}`,
    );
  const concurrency =
    options.concurrency ?? (mode === 'serial' ? 1 : DEFAULTS.backfill.parallelConcurrency);
  if (
    typeof concurrency !== 'number' ||
    !Number.isInteger(concurrency) ||
    concurrency < 1 ||
    concurrency > MAX_BACKFILL_CONCURRENCY
  )
    throw new InvalidArgumentError(
      'concurrency',
      `expected a whole number from 1 to ${MAX_BACKFILL_CONCURRENCY}, got ${String(concurrency)}`,
    );
  if (mode === 'serial' && concurrency !== 1)
    throw new InvalidArgumentError(
      'concurrency',
      `a serial backfill runs one tick at a time: leave concurrency out, or use mode 'parallel'`,
    );
  const ticks = cronTimes(schedule.cron, schedule.timezone, `schedule "${schedule.name}"`).latestIn(
    from - 1,
    to,
    MAX_BACKFILL_TICKS,
  );
  if (ticks.more)
    throw new InvalidArgumentError(
      'from',
      `the range holds more than ${MAX_BACKFILL_TICKS} ticks of "${schedule.cron}": split it into several backfills`,
    );
  if (ticks.ticks.length === 0)
    throw new InvalidArgumentError(
      'from',
      `no tick of "${schedule.cron}" (${schedule.timezone}) falls between ${new Date(from).toISOString()} and ${new Date(to).toISOString()}`,
    );
  return { from, to, mode, concurrency, total: ticks.ticks.length };
}

/**
 * A backfill as `backfills(name)`, `backfill` and `cancelBackfill` give it.
 *
 * @category Schedules
 */
export interface BackfillStatus {
  /** Its id (the node name under the schedule's `backfills`). */
  readonly id: string;
  readonly schedule: string;
  /** The range, ISO-8601, both ends included. */
  readonly from: string;
  readonly to: string;
  readonly mode: BackfillMode;
  readonly concurrency: number;
  readonly state: BackfillState;
  /** Cron ticks in the range, and how many of them started so far. */
  readonly total: number;
  readonly started: number;
  /** The ticks under way (ISO-8601): their plans have not ended yet. */
  readonly running: readonly string[];
  /** Ended ticks: the plan completed; failed, cancelled or deleted; or no plan was made (skipped). */
  readonly completed: number;
  readonly failed: number;
  readonly notRun: number;
  /** Why it was cancelled. */
  readonly reason?: string;
  readonly createdAt: string;
  readonly updatedAt: string;
}

/** The status of the backfill `id` of `schedule`, as its record stands. */
export function backfillStatus(
  schedule: string,
  id: string,
  record: BackfillRecord,
): BackfillStatus {
  const iso = (ms: number): string => new Date(ms).toISOString();
  return {
    id,
    schedule,
    from: iso(record.from),
    to: iso(record.to),
    mode: record.mode,
    concurrency: record.concurrency,
    state: record.state,
    total: record.total,
    started: record.started,
    running: record.running.map(iso),
    completed: record.completed,
    failed: record.failed,
    notRun: record.notRun,
    ...(record.reason === undefined ? {} : { reason: record.reason }),
    createdAt: record.createdAt,
    updatedAt: record.updatedAt,
  };
}
