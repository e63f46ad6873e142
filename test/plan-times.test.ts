/** When a plan was made and ended (src/plan/plan-times.ts), from the plan node's ctime, its tasks' ends and its cancel. */
import { describe, expect, it } from 'vitest';
import { planTimes } from '../src/plan/plan-times.js';

const CREATED = new Date('2026-11-27T10:00:00.000Z');
const at = (minutes: number): Date => new Date(CREATED.getTime() + minutes * 60_000);

describe('planTimes', () => {
  it('gives a running plan its creation time and no end', () => {
    expect(planTimes('running', CREATED, [at(1), undefined], undefined)).toEqual({
      createdAt: CREATED,
    });
    expect(
      planTimes('paused', CREATED, [at(1)], { state: 'paused', at: at(2), abortRunning: false }),
    ).toEqual({
      createdAt: CREATED,
    });
  });

  it('ends an ended plan at its latest task end, or at its cancel when that is later', () => {
    expect(planTimes('completed', CREATED, [at(3), at(7), undefined, at(5)], undefined)).toEqual({
      createdAt: CREATED,
      finishedAt: at(7),
    });
    expect(planTimes('failed', CREATED, [at(2)], undefined).finishedAt).toEqual(at(2));
    const cancel = { state: 'cancelled' as const, at: at(9), abortRunning: false };
    expect(planTimes('cancelled', CREATED, [at(4)], cancel).finishedAt).toEqual(at(9));
    expect(planTimes('cancelled', CREATED, [], cancel).finishedAt).toEqual(at(9));
  });

  it('tells no end for a completed plan that kept no task to tell it, and skips times that are no times', () => {
    expect(planTimes('completed', CREATED, [], undefined)).toEqual({ createdAt: CREATED });
    expect(planTimes('completed', 'yesterday', [new Date(Number.NaN), at(1)], undefined)).toEqual({
      finishedAt: at(1),
    });
    expect(planTimes('failed', new Date(Number.NaN), [new Date(Number.NaN)], undefined)).toEqual(
      {},
    );
  });
});
