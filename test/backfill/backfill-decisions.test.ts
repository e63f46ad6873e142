import { describe, expect, it } from 'vitest';
import { backfillStep, type TickProgress } from '../../src/backfill/backfill-decisions.js';
import { parseBackfillRecord, type BackfillRecord } from '../../src/backfill/backfill-record.js';
import { MalformedNodeError } from '../../src/errors/task-errors.js';

const NOW = '2026-11-27T00:00:00.000Z';

/** A running backfill of 5 ticks at 1 000, 2 000, … 5 000 ms, with `overrides`. */
function record(overrides: Partial<BackfillRecord> = {}): BackfillRecord {
  return {
    from: 1_000,
    to: 5_000,
    cron: '* * * * * *',
    timezone: 'UTC',
    mode: 'parallel',
    concurrency: 2,
    total: 5,
    started: 0,
    running: [],
    completed: 0,
    failed: 0,
    notRun: 0,
    state: 'running',
    scheduleNode: 7,
    createdAt: NOW,
    updatedAt: NOW,
    by: 'host:1/scheduler',
    ...overrides,
  };
}

/** The ticks after `last` (or before the range) that the caller hands the step: the next `count`. */
function upcoming(after: number, count: number): number[] {
  const first = Math.floor(after / 1_000) * 1_000 + 1_000;
  return Array.from({ length: count }, (_, index) => first + index * 1_000);
}

describe('backfillStep', () => {
  it('starts as many ticks as there are free slots, oldest first', () => {
    const step = backfillStep(record(), new Map(), upcoming(999, 2), NOW);
    expect(step?.start).toEqual([1_000, 2_000]);
    expect(step?.record).toMatchObject({ running: [1_000, 2_000], started: 2, last: 2_000 });
  });

  it('serial: starts the next tick only once the one under way has ended', () => {
    const serial = record({
      mode: 'serial',
      concurrency: 1,
      started: 1,
      last: 1_000,
      running: [1_000],
    });
    expect(backfillStep(serial, new Map(), upcoming(1_000, 1), NOW)).toBeUndefined();
    const step = backfillStep(serial, new Map([[1_000, 'completed']]), upcoming(1_000, 1), NOW);
    expect(step?.start).toEqual([2_000]);
    expect(step?.record).toMatchObject({ running: [2_000], started: 2, completed: 1 });
  });

  it.each<[TickProgress, 'completed' | 'failed' | 'notRun']>([
    ['completed', 'completed'],
    ['failed', 'failed'],
    ['notRun', 'notRun'],
  ])('counts a tick that ended %s once, in %s, as it leaves the list', (progress, counter) => {
    const under = record({ started: 2, last: 2_000, running: [1_000, 2_000] });
    const step = backfillStep(under, new Map([[1_000, progress]]), upcoming(2_000, 2), NOW);
    const next = step?.record as BackfillRecord;
    expect(next[counter]).toBe(1);
    expect(next.running).toEqual([2_000, 3_000]);
    expect(next.completed + next.failed + next.notRun).toBe(1);
  });

  it('never starts a tick past the range or beyond the total, and completes once the last has ended', () => {
    const nearEnd = record({ started: 4, last: 4_000, running: [4_000], completed: 3 });
    const step = backfillStep(nearEnd, new Map(), [5_000, 6_000], NOW);
    expect(step?.start).toEqual([5_000]);
    const last = backfillStep(
      step?.record as BackfillRecord,
      new Map([
        [4_000, 'completed'],
        [5_000, 'failed'],
      ]),
      [6_000, 7_000],
      NOW,
    );
    expect(last?.start).toEqual([]);
    expect(last?.record).toMatchObject({
      state: 'completed',
      running: [],
      completed: 4,
      failed: 1,
    });
  });

  it('a cancelled backfill starts nothing and stays cancelled as its ticks end', () => {
    const cancelled = record({
      state: 'cancelled',
      started: 2,
      last: 2_000,
      running: [1_000, 2_000],
    });
    expect(backfillStep(cancelled, new Map(), upcoming(2_000, 2), NOW)).toBeUndefined();
    const step = backfillStep(
      cancelled,
      new Map<number, TickProgress>([
        [1_000, 'failed'],
        [2_000, 'notRun'],
      ]),
      upcoming(2_000, 2),
      NOW,
    );
    expect(step?.start).toEqual([]);
    expect(step?.record).toMatchObject({ state: 'cancelled', running: [], failed: 1, notRun: 1 });
  });

  it('changes nothing when no tick ended and no slot is free', () => {
    const full = record({ started: 2, last: 2_000, running: [1_000, 2_000] });
    expect(
      backfillStep(full, new Map([[1_000, 'running']]), upcoming(2_000, 2), NOW),
    ).toBeUndefined();
  });
});

describe('parseBackfillRecord', () => {
  it('accepts a record it wrote', () => {
    expect(parseBackfillRecord('/s/p/backfills/b', record())).toEqual(record());
  });

  it.each<[string, unknown]>([
    ['null', null],
    [
      'a list of ticks under way longer than 100',
      record({ running: Array.from({ length: 101 }, (_, i) => i) }),
    ],
    ['a total beyond 10 000', record({ total: 10_001 })],
    ['more started than the total', record({ started: 6 })],
    ['a range that ends before it starts', record({ from: 6_000 })],
    ['an unknown state', { ...record(), state: 'paused' }],
    ['a concurrency of 0', record({ concurrency: 0 })],
    ['a tick that is no time', record({ running: [-1] })],
    ['a cron of a megabyte', record({ cron: 'x'.repeat(1_000_000) })],
  ])('refuses %s with MALFORMED_NODE', (_what, value) => {
    expect(() => parseBackfillRecord('/s/p/backfills/b', value)).toThrow(MalformedNodeError);
  });
});
