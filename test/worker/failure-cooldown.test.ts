import { describe, expect, it } from 'vitest';
import { resolveBackoff } from '../../src/config/options.js';
import { FailureCooldown } from '../../src/worker/failure-cooldown.js';

const TASK = '/p/plan-0000000001/task-0000000001';
const OTHER = '/p/plan-0000000001/task-0000000002';

function clock(start = 1_000_000): { now: () => number; advance: (ms: number) => void } {
  let time = start;
  return { now: () => time, advance: (ms) => void (time += ms) };
}

describe('FailureCooldown (with a fake clock)', () => {
  const backoff = resolveBackoff({ initial: 100, increase: 2, max: 1_000 });

  it('knows nothing of a task that never failed here', () => {
    const time = clock();
    const cooldown = new FailureCooldown(backoff, time.now);
    expect(cooldown.isCoolingDown(TASK)).toBe(false);
    expect(cooldown.until(TASK)).toBe(time.now());
  });

  it('leaves a failed task alone for the back-off, then lets it be tried again', () => {
    const time = clock();
    const cooldown = new FailureCooldown(backoff, time.now);
    cooldown.recordFailure(TASK);
    expect(cooldown.until(TASK)).toBe(time.now() + 100);
    expect(cooldown.isCoolingDown(TASK)).toBe(true);
    expect(cooldown.isCoolingDown(OTHER)).toBe(false);
    time.advance(99);
    expect(cooldown.isCoolingDown(TASK)).toBe(true);
    time.advance(1);
    expect(cooldown.isCoolingDown(TASK)).toBe(false);
  });

  it("grows the cool-down with each failure, up to the back-off's max", () => {
    const time = clock();
    const cooldown = new FailureCooldown(backoff, time.now);
    const lengths: number[] = [];
    for (let failure = 0; failure < 7; failure++) {
      cooldown.recordFailure(TASK);
      lengths.push(cooldown.until(TASK) - time.now());
      time.advance(cooldown.until(TASK) - time.now());
    }
    expect(lengths).toEqual([100, 200, 400, 800, 1_000, 1_000, 1_000]);
  });

  it('forgets a task on success: its next failure starts from the first cool-down again', () => {
    const time = clock();
    const cooldown = new FailureCooldown(backoff, time.now);
    cooldown.recordFailure(TASK);
    cooldown.recordFailure(TASK);
    cooldown.recordSuccess(TASK);
    expect(cooldown.isCoolingDown(TASK)).toBe(false);
    cooldown.recordFailure(TASK);
    expect(cooldown.until(TASK) - time.now()).toBe(100);
  });

  it('forgets tasks whose cool-down ended more than ten minutes ago (no growth with finished tasks)', () => {
    const time = clock();
    const cooldown = new FailureCooldown(backoff, time.now);
    cooldown.recordFailure(TASK);
    cooldown.recordFailure(TASK); // two failures: the next one would wait 400 ms
    time.advance(200 + 10 * 60_000 + 1);
    cooldown.recordFailure(OTHER); // any failure sweeps old entries
    cooldown.recordFailure(TASK);
    expect(cooldown.until(TASK) - time.now()).toBe(100); // counted from scratch
  });

  it('keeps entries whose cool-down ended less than ten minutes ago', () => {
    const time = clock();
    const cooldown = new FailureCooldown(backoff, time.now);
    cooldown.recordFailure(TASK);
    time.advance(100 + 10 * 60_000);
    cooldown.recordFailure(TASK);
    expect(cooldown.until(TASK) - time.now()).toBe(200);
  });

  it('has no cool-down with an initial back-off of 0', () => {
    const time = clock();
    const cooldown = new FailureCooldown(resolveBackoff({ initial: 0 }), time.now);
    cooldown.recordFailure(TASK);
    expect(cooldown.isCoolingDown(TASK)).toBe(false);
  });

  it('uses the real clock by default', () => {
    const cooldown = new FailureCooldown(backoff);
    const before = Date.now();
    cooldown.recordFailure(TASK);
    expect(cooldown.until(TASK)).toBeGreaterThanOrEqual(before + 100);
    expect(cooldown.isCoolingDown(TASK)).toBe(true);
  });
});
