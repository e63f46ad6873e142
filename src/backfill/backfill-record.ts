/**
 * A backfill's record, `<schedule>/backfills/<id>`: the range of past cron ticks it fires, how
 * many at a time, how far it got, and the ticks it has under way. Every scheduler moves it on with
 * versioned writes (backfiller.ts); the record is the backfill's only memory.
 */
import { MalformedNodeError } from '../errors/task-errors.js';

/**
 * `serial`: one tick at a time, each tick's plan starting after the previous one's ended;
 * `parallel`: up to `concurrency` tick plans at a time.
 *
 * @category Schedules
 */
export type BackfillMode = 'serial' | 'parallel';

/**
 * `running` until every tick of its range was fired and its plan ended (`completed`), or until
 * `cancelBackfill` (`cancelled`: no tick starts again, and the plans under way are cancelled).
 *
 * @category Schedules
 */
export type BackfillState = 'running' | 'completed' | 'cancelled';

/** The most ticks one backfill covers: its record counts them, and its creation walks them once. */
export const MAX_BACKFILL_TICKS = 10_000;
/** The most tick plans one backfill runs at a time (its record names each one under way). */
export const MAX_BACKFILL_CONCURRENCY = 100;
/** Finished backfills (completed, or cancelled with nothing left under way) kept per schedule, newest first. */
export const KEEP_FINISHED_BACKFILLS = 20;
/** The most backfill records a schedule holds: a new backfill beyond it is refused until some finish. */
export const MAX_BACKFILLS = 100;
/** The longest cancel reason kept. */
export const MAX_BACKFILL_REASON = 500;

export interface BackfillRecord {
  /** The range's first and last moments, ms since the epoch, both included. */
  readonly from: number;
  readonly to: number;
  /** The schedule's cron expression and time zone when the backfill was made: its ticks stay those if the schedule changes. */
  readonly cron: string;
  readonly timezone: string;
  readonly mode: BackfillMode;
  /** Tick plans at most under way at once (1 when serial). */
  readonly concurrency: number;
  /** Cron ticks in the range. */
  readonly total: number;
  /** Ticks started so far, oldest first: every tick up to `last` was started. */
  readonly started: number;
  readonly last?: number;
  /** Ticks started whose plans have not ended yet (their tick records are kept while named here). */
  readonly running: readonly number[];
  /** Ended ticks by outcome: the plan completed; failed, cancelled or deleted; or no plan was made (the tick skipped). */
  readonly completed: number;
  readonly failed: number;
  readonly notRun: number;
  readonly state: BackfillState;
  /** Why it was cancelled. */
  readonly reason?: string;
  /** The schedule node (czxid) it was made for: one made for a schedule removed and put again since does nothing. */
  readonly scheduleNode: number;
  readonly createdAt: string;
  readonly updatedAt: string;
  /** The process that made it. */
  readonly by: string;
}

const BACKFILL_ID = /^backfill-(\d{15})-[0-9a-f]{8}$/;

/** `backfill-001764036000000-1a2b3c4d`: ids sort by creation time as strings. */
export function backfillId(at: number, nonce: string): string {
  return `backfill-${String(at).padStart(15, '0')}-${nonce}`;
}

/** True for a backfill id (the name of a node under a schedule's `backfills`). */
export function isBackfillId(id: string): boolean {
  return BACKFILL_ID.test(id);
}

/** True when nothing of the backfill is left to do: no tick starts, none is under way. */
export function isFinished(record: BackfillRecord): boolean {
  return (
    record.state === 'completed' || (record.state === 'cancelled' && record.running.length === 0)
  );
}

/** The latest moment a Date holds (ms since the epoch): a time beyond it cannot be shown. */
export const MAX_TIME_MS = 8_640_000_000_000_000;

function isTime(value: unknown): value is number {
  return isCount(value, MAX_TIME_MS);
}

function isCount(value: unknown, max = Number.MAX_SAFE_INTEGER): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 && value <= max;
}

function isShortString(value: unknown, max: number): value is string {
  return typeof value === 'string' && value.length <= max;
}

/**
 * The record at `path`, checked in full before use: a node anyone could write names at most
 * MAX_BACKFILL_CONCURRENCY ticks under way, counts no more than MAX_BACKFILL_TICKS, and holds
 * short strings only. MalformedNodeError otherwise, saying what to do.
 */
export function parseBackfillRecord(path: string, value: unknown): BackfillRecord {
  const record = value as Partial<BackfillRecord> | null;
  const valid =
    typeof record === 'object' &&
    record !== null &&
    isTime(record.from) &&
    isTime(record.to) &&
    record.from <= record.to &&
    isShortString(record.cron, 200) &&
    isShortString(record.timezone, 100) &&
    (record.mode === 'serial' || record.mode === 'parallel') &&
    isCount(record.concurrency, MAX_BACKFILL_CONCURRENCY) &&
    record.concurrency >= 1 &&
    isCount(record.total, MAX_BACKFILL_TICKS) &&
    isCount(record.started, record.total) &&
    (record.last === undefined || isTime(record.last)) &&
    Array.isArray(record.running) &&
    record.running.length <= MAX_BACKFILL_CONCURRENCY &&
    record.running.every((tick) => isTime(tick)) &&
    isCount(record.completed, MAX_BACKFILL_TICKS) &&
    isCount(record.failed, MAX_BACKFILL_TICKS) &&
    isCount(record.notRun, MAX_BACKFILL_TICKS) &&
    (record.state === 'running' || record.state === 'completed' || record.state === 'cancelled') &&
    (record.reason === undefined || isShortString(record.reason, MAX_BACKFILL_REASON)) &&
    typeof record.scheduleNode === 'number' &&
    isShortString(record.createdAt, 40) &&
    isShortString(record.updatedAt, 40) &&
    isShortString(record.by, 300);
  if (!valid)
    throw new MalformedNodeError(
      path,
      `expected a backfill record { from, to, cron, timezone, mode, concurrency, total, started, running (at most ${MAX_BACKFILL_CONCURRENCY} ticks), completed, failed, notRun, state, … }: it fires nothing: delete the node (zkCli.sh delete <path>) and make the backfill again (zk-plan schedule backfill)`,
    );
  return record as BackfillRecord;
}
