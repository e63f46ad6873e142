import { describe, expect, it } from 'vitest';
import type { BackoffOptions } from '../../src/config/options.js';
import { InvalidArgumentError } from '../../src/errors/usage-errors.js';
import { calcSleepTime } from '../../src/worker/backoff.js';
import { expectThrows } from '../support/expect-error.js';

describe('calcSleepTime', () => {
  describe("the spec's table", () => {
    const table: ReadonlyArray<[BackoffOptions, number, number]> = [
      [{ initial: 1234 }, 0, 1234],
      [{}, 0, 100],
      [{ increase: 2, initial: 1 }, 8, 256],
      [{}, 1, 150],
      [{ max: 300 }, 20, 300],
      [{}, 20, 10_000],
      [{ max: 1000 }, 100, 1000],
    ];
    it.each(table)('calcSleepTime(%j, %i) = %d', (attrs, count, expected) => {
      expect(calcSleepTime(attrs, count)).toBe(expected);
    });
  });

  it('grows by `increase` per round before reaching the cap', () => {
    expect(calcSleepTime({}, 2)).toBe(225);
    expect(calcSleepTime({ initial: 10, increase: 3, max: 1_000_000 }, 4)).toBe(810);
  });

  it('stays finite and equal to max for a huge count (no overflow)', () => {
    for (const count of [1e6, Number.MAX_SAFE_INTEGER]) {
      const sleep = calcSleepTime({}, count);
      expect(Number.isFinite(sleep)).toBe(true);
      expect(sleep).toBe(10_000);
    }
    expect(calcSleepTime({ max: 1000 }, 1e6)).toBe(1000);
    // max is a time option: at most 2^31 − 1 ms, the longest a Node timer waits.
    expect(calcSleepTime({ initial: 1, increase: 1000, max: 2_147_483_647 }, 1e6)).toBe(
      2_147_483_647,
    );
  });

  it('caps the first sleep at max when initial exceeds it', () => {
    expect(calcSleepTime({ initial: 500, max: 200 }, 0)).toBe(200);
  });

  it('treats undefined attributes as defaults', () => {
    expect(calcSleepTime({ initial: undefined, increase: undefined, max: undefined }, 1)).toBe(150);
  });

  it('is monotonic non-decreasing over counts 0..50', () => {
    const attrSets: BackoffOptions[] = [
      {},
      { initial: 1, increase: 2 },
      { initial: 0 },
      { increase: 1 },
      { max: 300 },
      { initial: 7, increase: 1.01, max: 50 },
    ];
    for (const attrs of attrSets) {
      let previous = -Infinity;
      for (let count = 0; count <= 50; count++) {
        const sleep = calcSleepTime(attrs, count);
        expect(sleep, `${JSON.stringify(attrs)} at count ${count}`).toBeGreaterThanOrEqual(
          previous,
        );
        previous = sleep;
      }
    }
  });

  describe('rejects invalid input with InvalidArgumentError', () => {
    const cases: ReadonlyArray<[string, BackoffOptions, number]> = [
      ['a negative count', {}, -1],
      ['a non-integer count', {}, 1.5],
      ['a NaN count', {}, Number.NaN],
      ['an infinite count', {}, Number.POSITIVE_INFINITY],
      ['increase < 1', { increase: 0.5 }, 1],
      ['increase 0', { increase: 0 }, 1],
      ['a negative initial', { initial: -1 }, 0],
      ['a NaN initial', { initial: Number.NaN }, 0],
      ['a NaN increase', { increase: Number.NaN }, 0],
      ['a NaN max', { max: Number.NaN }, 0],
      ['a negative max', { max: -5 }, 0],
    ];
    it.each(cases)('%s', (_title, attrs, count) => {
      const error = expectThrows(() => calcSleepTime(attrs, count), InvalidArgumentError);
      expect(error.code).toBe('INVALID_ARGUMENT');
    });
  });
});
