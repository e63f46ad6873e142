import { describe, expect, it } from 'vitest';
import { cronTimes, type CronTimes } from '../../src/schedule/cron-times.js';
import { dueTicks, overlapDecision, type DueInput } from '../../src/schedule/tick-decisions.js';
import {
  cronTickId,
  manualTickId,
  planPathForTick,
  sortTickIds,
  timeOfTickId,
} from '../../src/schedule/tick-record.js';
import { InvalidArgumentError } from '../../src/errors/usage-errors.js';
import { expectThrows } from '../support/expect-error.js';
import { isZkPlanPlanName, nameOf } from '../../src/zk/layout.js';

const T0 = Date.UTC(2026, 10, 25, 2, 0, 0);
/** Made in each test, not when the file loads: under mutation testing a throw while the file loads fails no test, so the mutant would pass. */
const everySecond = (): CronTimes => cronTimes('* * * * * *', 'UTC', 'test');
const iso = (ms: number | undefined): string | undefined =>
  ms === undefined ? undefined : new Date(ms).toISOString();
const base: DueInput = {
  cursor: undefined,
  activeSince: T0,
  now: T0,
  misfire: 'fireAll',
  catchUpLimit: 10,
  misfireGraceMs: 500,
};

describe('cronTimes', () => {
  it('reads seconds and time zones through croner', () => {
    const berlin = cronTimes('0 30 2 * * *', 'Europe/Berlin', 'test');
    expect(new Date(berlin.next(Date.UTC(2026, 10, 25)) as number).toISOString()).toBe(
      '2026-11-25T01:30:00.000Z',
    );
    expect(everySecond().nextN(T0, 3)).toEqual([T0 + 1000, T0 + 2000, T0 + 3000]);
    expect(everySecond().latestIn(T0, T0 + 5000, 3)).toEqual({
      ticks: [T0 + 3000, T0 + 4000, T0 + 5000],
      more: true,
    });
    expect(everySecond().latestIn(T0, T0 + 2000, 5)).toEqual({
      ticks: [T0 + 1000, T0 + 2000],
      more: false,
    });
  });

  it('reads a UTC schedule in UTC whatever the zone the process runs in', () => {
    const zone = process.env['TZ'];
    process.env['TZ'] = 'Asia/Kolkata'; // UTC+05:30 all year
    try {
      const daily = cronTimes('0 30 2 * * *', 'UTC', 'test');
      expect(new Date(daily.next(Date.UTC(2026, 10, 25)) as number).toISOString()).toBe(
        '2026-11-25T02:30:00.000Z',
      );
      expect(daily.latestIn(Date.UTC(2026, 10, 25), Date.UTC(2026, 10, 27), 5).ticks).toEqual([
        Date.UTC(2026, 10, 25, 2, 30),
        Date.UTC(2026, 10, 26, 2, 30),
      ]);
    } finally {
      if (zone === undefined) delete process.env['TZ'];
      else process.env['TZ'] = zone;
    }
  });

  it('refuses a bad expression or time zone with a coded error naming the schedule', () => {
    expect(() => cronTimes('every day', 'UTC', 'schedule "x"')).toThrow(InvalidArgumentError);
    expect(() => cronTimes('* * * * *', 'Mars/Olympus', 'schedule "x"')).toThrow(
      /schedule "x": "Mars\/Olympus" is not an IANA time zone/,
    );
  });

  it('says which argument is wrong and what was expected', () => {
    for (const cron of ['', '   ', 42, undefined]) {
      const error = expectThrows(
        () => cronTimes(cron as string, 'UTC', 'schedule "x"'),
        InvalidArgumentError,
      );
      expect(error.argument).toBe('cron');
      expect(error.message).toBe(
        'Invalid cron: schedule "x": expected a cron expression such as "0 0 2 * * *"',
      );
    }
    const unparsable = expectThrows(
      () => cronTimes('every day', 'UTC', 'schedule "x"'),
      InvalidArgumentError,
    );
    expect(unparsable.argument).toBe('cron');
    expect(unparsable.message).toMatch(
      /^Invalid cron: schedule "x": "every day" is not a cron expression croner accepts \(.+\)$/,
    );
    for (const timezone of ['', 42, undefined]) {
      const error = expectThrows(
        () => cronTimes('* * * * *', timezone as string, 'schedule "x"'),
        InvalidArgumentError,
      );
      expect(error.argument).toBe('timezone');
      expect(error.message).toBe(
        'Invalid timezone: schedule "x": expected an IANA time zone such as "UTC"',
      );
    }
    expect(
      expectThrows(
        () => cronTimes('* * * * *', 'Mars/Olympus', 'schedule "x"'),
        InvalidArgumentError,
      ).argument,
    ).toBe('timezone');
    for (const timezone of ['UTC', 'Europe/Berlin', 'America/New_York', 'Asia/Kolkata'])
      expect(cronTimes('0 0 2 * * *', timezone, 'x').next(T0)).toBeGreaterThan(T0);
  });

  it('fires a daily time that falls in the spring daylight-saving gap once, when the gap ends, and one in the repeated autumn hour once, the first time', () => {
    // Europe/Berlin: 2026-03-29 02:00 CET jumps to 03:00 CEST; 2026-10-25 03:00 CEST goes back to 02:00 CET.
    const daily = cronTimes('0 30 2 * * *', 'Europe/Berlin', 'test');
    expect(daily.nextN(Date.UTC(2026, 2, 27, 12), 3).map(iso)).toEqual([
      '2026-03-28T01:30:00.000Z',
      '2026-03-29T01:00:00.000Z',
      '2026-03-30T00:30:00.000Z',
    ]);
    expect(daily.nextN(Date.UTC(2026, 9, 24, 12), 2).map(iso)).toEqual([
      '2026-10-25T00:30:00.000Z',
      '2026-10-26T01:30:00.000Z',
    ]);
  });

  it('fires an hourly expression every real hour across both daylight-saving changes', () => {
    const hourly = cronTimes('0 0 * * * *', 'Europe/Berlin', 'test');
    const hours = (from: number): number[] => [0, 1, 2, 3].map((hour) => from + hour * 3_600_000);
    expect(hourly.nextN(Date.UTC(2026, 2, 28, 23, 30), 4)).toEqual(hours(Date.UTC(2026, 2, 29, 0)));
    expect(hourly.nextN(Date.UTC(2026, 9, 24, 23, 30), 4)).toEqual(hours(Date.UTC(2026, 9, 25, 0)));
  });

  it("reads ranges and names in the schedule's time zone", () => {
    // 09:00 on weekdays in New York (UTC−5 in winter): Friday, then Monday, skipping the weekend.
    const weekdays = cronTimes('0 0 9 * * MON-FRI', 'America/New_York', 'test');
    expect(weekdays.nextN(Date.UTC(2026, 10, 27), 3).map(iso)).toEqual([
      '2026-11-27T14:00:00.000Z',
      '2026-11-30T14:00:00.000Z',
      '2026-12-01T14:00:00.000Z',
    ]);
    // Five fields: minutes first, no seconds.
    expect(cronTimes('15-16 * * * *', 'UTC', 'test').nextN(T0, 3)).toEqual([
      T0 + 15 * 60_000,
      T0 + 16 * 60_000,
      T0 + 75 * 60_000,
    ]);
  });

  it('tells when an expression never fires again: no next time, no times in any range', () => {
    const newYear2020 = cronTimes('0 0 0 1 1 * 2020', 'UTC', 'test');
    expect(newYear2020.next(Date.UTC(2019, 5))).toBe(Date.UTC(2020, 0));
    expect(newYear2020.next(Date.UTC(2021, 0))).toBeUndefined();
    expect(newYear2020.nextN(Date.UTC(2021, 0), 3)).toEqual([]);
    expect(newYear2020.latestIn(Date.UTC(2021, 0), Date.UTC(2030, 0), 5)).toEqual({
      ticks: [],
      more: false,
    });
    expect(cronTimes('0 0 30 2 *', 'UTC', 'test').next(T0)).toBeUndefined(); // 30 February
  });

  it('latestIn takes the range (after, until], and nothing for an empty range or a limit below 1', () => {
    const times = everySecond();
    expect(times.latestIn(T0, T0 + 3000, 3)).toEqual({
      ticks: [T0 + 1000, T0 + 2000, T0 + 3000],
      more: false,
    });
    expect(times.latestIn(T0 + 1, T0 + 2999, 3)).toEqual({
      ticks: [T0 + 1000, T0 + 2000],
      more: false,
    });
    expect(times.latestIn(T0, T0 + 3000, 2)).toEqual({ ticks: [T0 + 2000, T0 + 3000], more: true });
    expect(times.latestIn(T0, T0, 3)).toEqual({ ticks: [], more: false });
    expect(times.latestIn(T0 + 3000, T0, 3)).toEqual({ ticks: [], more: false });
    expect(times.latestIn(T0, T0 + 3000, 0)).toEqual({ ticks: [], more: false });
    expect(times.latestIn(T0, T0 + 3000, -1)).toEqual({ ticks: [], more: false });
  });
});

describe('dueTicks', () => {
  it('fires the tick that just came, and moves the cursor to it', () => {
    expect(dueTicks(everySecond(), { ...base, cursor: T0, now: T0 + 1010 })).toEqual({
      fire: [T0 + 1000],
      skipped: 0,
      skippedMore: false,
      cursor: T0 + 1000,
    });
  });

  it('fires nothing at or before the cursor: a clock that jumps back repeats nothing', () => {
    expect(dueTicks(everySecond(), { ...base, cursor: T0 + 5000, now: T0 + 2000 })).toEqual({
      fire: [],
      skipped: 0,
      skippedMore: false,
      cursor: undefined,
    });
  });

  it('fires no tick up to activeSince (a new, changed or resumed schedule)', () => {
    expect(
      dueTicks(everySecond(), { ...base, activeSince: T0 + 3500, now: T0 + 4100 }).fire,
    ).toEqual([T0 + 4000]);
    expect(
      dueTicks(everySecond(), { ...base, activeSince: T0 + 4000, now: T0 + 4100 }).fire,
    ).toEqual([]);
  });

  it('after 5 missed ticks: fireAll fires each, fireOnce the newest, skip none; on-time ticks always fire', () => {
    const down = { ...base, cursor: T0, now: T0 + 5200 }; // ticks 1..4 missed, 5 on time
    expect(dueTicks(everySecond(), { ...down, misfire: 'fireAll' }).fire).toEqual(
      [1, 2, 3, 4, 5].map((s) => T0 + s * 1000),
    );
    expect(dueTicks(everySecond(), { ...down, misfire: 'fireOnce' })).toMatchObject({
      fire: [T0 + 5000],
      skipped: 4,
    });
    expect(dueTicks(everySecond(), { ...down, misfire: 'skip' })).toMatchObject({
      fire: [T0 + 5000],
      skipped: 4,
      cursor: T0 + 5000,
    });
    const late = { ...base, cursor: T0, now: T0 + 5800 }; // all five missed
    expect(dueTicks(everySecond(), { ...late, misfire: 'fireOnce' })).toMatchObject({
      fire: [T0 + 5000],
      skipped: 4,
    });
    expect(dueTicks(everySecond(), { ...late, misfire: 'skip' })).toMatchObject({
      fire: [],
      skipped: 5,
      cursor: T0 + 5000,
    });
  });

  it('takes a tick exactly misfireGraceMs late as on time, and one a millisecond later as missed', () => {
    // Under 'skip' only on-time ticks fire: the tick at T0 + 1000 with a grace of 500.
    expect(
      dueTicks(everySecond(), { ...base, cursor: T0, now: T0 + 1500, misfire: 'skip' }),
    ).toEqual({
      fire: [T0 + 1000],
      skipped: 0,
      skippedMore: false,
      cursor: T0 + 1000,
    });
    expect(
      dueTicks(everySecond(), { ...base, cursor: T0, now: T0 + 1501, misfire: 'skip' }),
    ).toEqual({
      fire: [],
      skipped: 1,
      skippedMore: false,
      cursor: T0 + 1000,
    });
  });

  it('fireAll fires at most catchUpLimit missed ticks, the newest, and says more were passed over', () => {
    const decision = dueTicks(everySecond(), {
      ...base,
      cursor: T0,
      now: T0 + 60_800,
      catchUpLimit: 3,
    });
    expect(decision).toEqual({
      fire: [T0 + 58_000, T0 + 59_000, T0 + 60_000],
      skipped: 0,
      skippedMore: true,
      cursor: T0 + 60_000,
    });
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
    expect(overlapDecision('skip', [{ ...b, finished: true }, a])).toEqual({
      action: 'skip',
      reason: 'overlap: the previous run /p/a has not finished',
    });
    expect(overlapDecision('skip', [a, b])).toEqual({
      action: 'skip',
      reason: 'overlap: the previous run /p/a, /p/b has not finished',
    });
    expect(overlapDecision('allow', [a, b])).toEqual({ action: 'fire' });
    expect(overlapDecision('cancelPrevious', [a, { plan: '/p/c', finished: true }, b])).toEqual({
      action: 'cancelThenFire',
      plans: ['/p/a', '/p/b'],
    });
    // A manual run still being fired holds back a tick under 'skip'; under 'cancelPrevious' there is nothing to cancel yet.
    const starting = { plan: '/p/m', finished: false, starting: true };
    expect(overlapDecision('skip', [starting])).toEqual({
      action: 'skip',
      reason: 'overlap: the previous run /p/m has not finished',
    });
    expect(overlapDecision('cancelPrevious', [starting])).toEqual({ action: 'fire' });
    expect(overlapDecision('cancelPrevious', [starting, a])).toEqual({
      action: 'cancelThenFire',
      plans: ['/p/a'],
    });
  });
});

describe('tick ids and plan paths', () => {
  it('sort by time, name the plan after the tick, and tell manual ticks apart', () => {
    const ids = [
      cronTickId(T0 + 1000),
      manualTickId(T0 + 500, '0a0b0c0d'),
      cronTickId(T0),
      'lock',
      'junk-1',
    ];
    expect(sortTickIds(ids)).toEqual([
      cronTickId(T0),
      manualTickId(T0 + 500, '0a0b0c0d'),
      cronTickId(T0 + 1000),
    ]);
    expect(timeOfTickId(cronTickId(T0))).toBe(T0);
    expect(planPathForTick('/plans', 'nightly', cronTickId(T0))).toBe(
      '/plans/nightly@20261125T020000.000Z',
    );
    expect(planPathForTick('/plans', 'nightly', manualTickId(T0, '0a0b0c0d'))).toBe(
      '/plans/nightly@20261125T020000.000Z-manual-0a0b0c0d',
    );
    for (const id of [cronTickId(T0), manualTickId(T0, '0a0b0c0d')])
      expect(isZkPlanPlanName(nameOf(planPathForTick('/plans', 'a.b-c_9', id)))).toBe(true);
  });
});
