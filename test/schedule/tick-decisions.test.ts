import { describe, expect, it } from 'vitest';
import { cronTimes } from '../../src/schedule/cron-times.js';
import { dueTicks, overlapDecision, type DueInput } from '../../src/schedule/tick-decisions.js';
import { cronTickId, manualTickId, planPathForTick, sortTickIds, timeOfTickId } from '../../src/schedule/tick-record.js';
import { InvalidArgumentError } from '../../src/errors/usage-errors.js';
import { isZkPlanPlanName, nameOf } from '../../src/zk/layout.js';

const T0 = Date.UTC(2026, 10, 25, 2, 0, 0);
const everySecond = cronTimes('* * * * * *', 'UTC', 'test');
const base: DueInput = { cursor: undefined, activeSince: T0, now: T0, misfire: 'fireAll', catchUpLimit: 10, misfireGraceMs: 500 };

describe('cronTimes', () => {
  it('reads seconds and time zones through croner', () => {
    const berlin = cronTimes('0 30 2 * * *', 'Europe/Berlin', 'test');
    expect(new Date(berlin.next(Date.UTC(2026, 10, 25)) as number).toISOString()).toBe('2026-11-25T01:30:00.000Z');
    expect(everySecond.nextN(T0, 3)).toEqual([T0 + 1000, T0 + 2000, T0 + 3000]);
    expect(everySecond.latestIn(T0, T0 + 5000, 3)).toEqual({ ticks: [T0 + 3000, T0 + 4000, T0 + 5000], more: true });
    expect(everySecond.latestIn(T0, T0 + 2000, 5)).toEqual({ ticks: [T0 + 1000, T0 + 2000], more: false });
  });

  it('refuses a bad expression or time zone with a coded error naming the schedule', () => {
    expect(() => cronTimes('every day', 'UTC', 'schedule "x"')).toThrow(InvalidArgumentError);
    expect(() => cronTimes('* * * * *', 'Mars/Olympus', 'schedule "x"')).toThrow(/schedule "x": "Mars\/Olympus" is not an IANA time zone/);
  });
});

describe('dueTicks', () => {
  it('fires the tick that just came, and moves the cursor to it', () => {
    expect(dueTicks(everySecond, { ...base, cursor: T0, now: T0 + 1010 })).toEqual({ fire: [T0 + 1000], skipped: 0, skippedMore: false, cursor: T0 + 1000 });
  });

  it('fires nothing at or before the cursor: a clock that jumps back repeats nothing', () => {
    expect(dueTicks(everySecond, { ...base, cursor: T0 + 5000, now: T0 + 2000 })).toEqual({ fire: [], skipped: 0, skippedMore: false, cursor: undefined });
  });

  it('fires no tick up to activeSince (a new, changed or resumed schedule)', () => {
    expect(dueTicks(everySecond, { ...base, activeSince: T0 + 3500, now: T0 + 4100 }).fire).toEqual([T0 + 4000]);
    expect(dueTicks(everySecond, { ...base, activeSince: T0 + 4000, now: T0 + 4100 }).fire).toEqual([]);
  });

  it('after 5 missed ticks: fireAll fires each, fireOnce the newest, skip none; on-time ticks always fire', () => {
    const down = { ...base, cursor: T0, now: T0 + 5200 }; // ticks 1..4 missed, 5 on time
    expect(dueTicks(everySecond, { ...down, misfire: 'fireAll' }).fire).toEqual([1, 2, 3, 4, 5].map((s) => T0 + s * 1000));
    expect(dueTicks(everySecond, { ...down, misfire: 'fireOnce' })).toMatchObject({ fire: [T0 + 5000], skipped: 4 });
    expect(dueTicks(everySecond, { ...down, misfire: 'skip' })).toMatchObject({ fire: [T0 + 5000], skipped: 4, cursor: T0 + 5000 });
    const late = { ...base, cursor: T0, now: T0 + 5800 }; // all five missed
    expect(dueTicks(everySecond, { ...late, misfire: 'fireOnce' })).toMatchObject({ fire: [T0 + 5000], skipped: 4 });
    expect(dueTicks(everySecond, { ...late, misfire: 'skip' })).toMatchObject({ fire: [], skipped: 5, cursor: T0 + 5000 });
  });

  it('fireAll fires at most catchUpLimit missed ticks, the newest, and says more were passed over', () => {
    const decision = dueTicks(everySecond, { ...base, cursor: T0, now: T0 + 60_800, catchUpLimit: 3 });
    expect(decision).toEqual({ fire: [T0 + 58_000, T0 + 59_000, T0 + 60_000], skipped: 0, skippedMore: true, cursor: T0 + 60_000 });
  });
});

describe('overlapDecision', () => {
  it('fires when no earlier run is unfinished; else skips, fires anyway or cancels every unfinished one first', () => {
    const a = { plan: '/p/a', finished: false };
    const b = { plan: '/p/b', finished: false };
    expect(overlapDecision('skip', [])).toEqual({ action: 'fire' });
    expect(overlapDecision('skip', [{ ...a, finished: true }])).toEqual({ action: 'fire' });
    expect(overlapDecision('skip', [a])).toMatchObject({ action: 'skip' });
    // A finished newest run does not hide an unfinished older one (a manual run beside the cron runs).
    expect(overlapDecision('skip', [{ ...b, finished: true }, a])).toEqual({ action: 'skip', reason: 'overlap: the previous run /p/a has not finished' });
    expect(overlapDecision('allow', [a, b])).toEqual({ action: 'fire' });
    expect(overlapDecision('cancelPrevious', [a, { plan: '/p/c', finished: true }, b])).toEqual({ action: 'cancelThenFire', plans: ['/p/a', '/p/b'] });
    // A manual run still being fired holds back a tick under 'skip'; under 'cancelPrevious' there is nothing to cancel yet.
    const starting = { plan: '/p/m', finished: false, starting: true };
    expect(overlapDecision('skip', [starting])).toEqual({ action: 'skip', reason: 'overlap: the previous run /p/m has not finished' });
    expect(overlapDecision('cancelPrevious', [starting])).toEqual({ action: 'fire' });
    expect(overlapDecision('cancelPrevious', [starting, a])).toEqual({ action: 'cancelThenFire', plans: ['/p/a'] });
  });
});

describe('tick ids and plan paths', () => {
  it('sort by time, name the plan after the tick, and tell manual ticks apart', () => {
    const ids = [cronTickId(T0 + 1000), manualTickId(T0 + 500, '0a0b0c0d'), cronTickId(T0), 'lock', 'junk-1'];
    expect(sortTickIds(ids)).toEqual([cronTickId(T0), manualTickId(T0 + 500, '0a0b0c0d'), cronTickId(T0 + 1000)]);
    expect(timeOfTickId(cronTickId(T0))).toBe(T0);
    expect(planPathForTick('/plans', 'nightly', cronTickId(T0))).toBe('/plans/nightly@20261125T020000.000Z');
    expect(planPathForTick('/plans', 'nightly', manualTickId(T0, '0a0b0c0d'))).toBe('/plans/nightly@20261125T020000.000Z-manual-0a0b0c0d');
    for (const id of [cronTickId(T0), manualTickId(T0, '0a0b0c0d')]) expect(isZkPlanPlanName(nameOf(planPathForTick('/plans', 'a.b-c_9', id)))).toBe(true);
  });
});
