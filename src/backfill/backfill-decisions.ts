/**
 * The pure decision of a backfill's step: which ticks under way have ended (and how), which
 * ticks start now, and whether the backfill is complete. The backfiller reads ZooKeeper, asks
 * this, and commits the answer with one versioned write.
 */
import type { BackfillRecord } from './backfill-record.js';

/**
 * Where a started tick stands: its plan still to be built or running; or ended: the plan
 * completed, failed (or was cancelled or deleted, or the tick could not build one), or no plan
 * was made (the tick was skipped).
 */
export type TickProgress = 'running' | 'completed' | 'failed' | 'notRun';

export interface BackfillStep {
  /** The record to write over the one read. */
  readonly record: BackfillRecord;
  /** Ticks that start with this step (their records are made once it has landed), oldest first. */
  readonly start: readonly number[];
}

/**
 * The step from `record`, given the progress of its ticks under way (a tick missing from
 * `progress` still runs) and the next ticks of its range after `last`, oldest first (at least as
 * many as it may start). Undefined when nothing changes. Ticks start only while the backfill runs,
 * and only into free slots: with a concurrency of 1 (serial), a tick starts only after the one
 * before it ended. A cancelled backfill starts nothing and keeps its ticks under way until their
 * plans end.
 */
export function backfillStep(
  record: BackfillRecord,
  progress: ReadonlyMap<number, TickProgress>,
  upcoming: readonly number[],
  now: string,
): BackfillStep | undefined {
  const ended = { completed: 0, failed: 0, notRun: 0 };
  const running: number[] = [];
  for (const tick of record.running) {
    const state = progress.get(tick) ?? 'running';
    if (state === 'running') running.push(tick);
    else ended[state] += 1;
  }
  const left = record.total - record.started;
  const start =
    record.state === 'running'
      ? upcoming
          .filter((tick) => tick > (record.last ?? record.from - 1) && tick <= record.to)
          .slice(0, Math.max(0, Math.min(left, record.concurrency - running.length)))
      : [];
  const done =
    record.state === 'running' &&
    running.length === 0 &&
    start.length === 0 &&
    (left === 0 || upcoming.every((tick) => tick > record.to));
  if (ended.completed + ended.failed + ended.notRun === 0 && start.length === 0 && !done)
    return undefined;
  const last = start.at(-1) ?? record.last;
  return {
    record: {
      ...record,
      running: [...running, ...start],
      started: record.started + start.length,
      ...(last === undefined ? {} : { last }),
      completed: record.completed + ended.completed,
      failed: record.failed + ended.failed,
      notRun: record.notRun + ended.notRun,
      state: done ? 'completed' : record.state,
      updatedAt: now,
    },
    start,
  };
}
