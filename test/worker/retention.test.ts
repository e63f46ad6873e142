import { describe, expect, it } from 'vitest';
import { resolveRetention } from '../../src/config/options.js';
import { plansToDelete } from '../../src/worker/retention.js';

const DAY = 24 * 60 * 60 * 1000;
const plan = (n: number, createdAt: number) => ({
  plan: `/p/plan-${String(n).padStart(10, '0')}`,
  createdAt,
});

describe('plansToDelete (retention of finished plans)', () => {
  it('deletes finished plans created longer ago than maxAgeMs, keeps younger ones', () => {
    const now = 100 * DAY;
    const finished = [plan(1, now - 8 * DAY), plan(2, now - 7 * DAY), plan(3, now - DAY)];
    expect(plansToDelete(finished, now, { maxAgeMs: 7 * DAY, maxCount: 1_000 })).toEqual([
      plan(1, 0).plan,
    ]);
  });

  it('keeps only the newest maxCount, whatever their age', () => {
    const finished = [plan(1, 10), plan(2, 30), plan(3, 20), plan(4, 40)];
    expect(plansToDelete(finished, 50, { maxAgeMs: DAY, maxCount: 2 }).sort()).toEqual([
      plan(1, 0).plan,
      plan(3, 0).plan,
    ]);
    expect(plansToDelete(finished, 50, { maxAgeMs: DAY, maxCount: 0 })).toHaveLength(4);
  });

  it('deletes nothing when every finished plan is young and within the count', () => {
    expect(plansToDelete([plan(1, 10), plan(2, 20)], 30, { maxAgeMs: DAY, maxCount: 5 })).toEqual(
      [],
    );
  });
});

describe('resolveRetention', () => {
  it('fills in the defaults, and false keeps plans for ever', () => {
    expect(resolveRetention(undefined)).toEqual({
      maxAgeMs: 7 * DAY,
      maxCount: 1_000,
      sweepIntervalMs: 60_000,
    });
    expect(resolveRetention(false)).toBeUndefined();
    expect(resolveRetention({ maxCount: 3 })).toMatchObject({ maxCount: 3, maxAgeMs: 7 * DAY });
  });

  it('refuses bad values and unknown keys with a coded error naming them', () => {
    expect(() => resolveRetention({ maxCount: -1 })).toThrow(/retention\.maxCount/);
    expect(() => resolveRetention({ maxAgeMs: 1.5 })).toThrow(/retention\.maxAgeMs/);
    expect(() => resolveRetention({ sweepIntervalMs: 0 })).toThrow(/retention\.sweepIntervalMs/);
    expect(() => resolveRetention({ maxAge: 5 } as never)).toThrow(
      expect.objectContaining({ code: 'INVALID_ARGUMENT' }),
    );
  });
});
