/**
 * A task's `waiting` child: why its function said "not yet" (`ctx.notYet`), since when, how many
 * checks so far, and when it may run again. Written under the claim of each check; it goes with the
 * task. A worker that claims the task before `notBefore` gives it back unrun.
 */
import { MalformedNodeError } from '../errors/task-errors.js';
import { MAX_WAIT_REASON } from '../exec/not-yet.js';

export interface WaitingRecord {
  /** What the task waits for, as its function said. */
  readonly reason: string;
  /** The first check that said "not yet". */
  readonly since: Date;
  /** Checks that said "not yet" so far. */
  readonly checks: number;
  /** When the task may run again. */
  readonly notBefore: Date;
}

/** The record after one more "not yet" at `now`. */
export function nextWaiting(
  previous: WaitingRecord | undefined,
  reason: string,
  now: number,
  afterMs: number,
): WaitingRecord {
  return {
    reason,
    since: previous?.since ?? new Date(now),
    checks: (previous?.checks ?? 0) + 1,
    notBefore: new Date(now + afterMs),
  };
}

/** A Date that holds a time (an invalid one cannot be shown or compared). */
function isShowableDate(value: unknown): value is Date {
  return value instanceof Date && !Number.isNaN(value.getTime());
}

/** The stored record, checked in full (anyone may write it); MalformedNodeError otherwise. */
export function parseWaitingRecord(path: string, value: unknown): WaitingRecord {
  const record = value as Partial<WaitingRecord> | null;
  if (
    typeof record !== 'object' ||
    record === null ||
    typeof record.reason !== 'string' ||
    record.reason.length > MAX_WAIT_REASON ||
    !isShowableDate(record.since) ||
    !isShowableDate(record.notBefore) ||
    typeof record.checks !== 'number' ||
    !Number.isSafeInteger(record.checks) ||
    record.checks < 1
  )
    throw new MalformedNodeError(path, 'expected { reason, since, checks, notBefore }');
  return record as WaitingRecord;
}
