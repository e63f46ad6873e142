/**
 * The trigger decision (src/trigger/trigger-decision.ts), a pure function: whether a task runs,
 * given its rule and how its inputs ended, and what it receives.
 */
import { describe, expect, it } from 'vitest';
import { decideTrigger } from '../../src/trigger/trigger-decision.js';
import {
  failedValue,
  outcomeOf,
  skippedValue,
  OUTCOME_FIELD,
} from '../../src/trigger/task-outcome.js';

const TASK = '/plans/plan-0000000000/task-0000000009';
const A = '/plans/plan-0000000000/task-0000000001';
const B = '/plans/plan-0000000000/task-0000000002';
const failedA = failedValue({ task: A, code: 'TASK_FAILED', type: 'Error', message: 'disk full' });
const skippedB = skippedValue('no rows today', B);

describe('decideTrigger', () => {
  it('allSucceeded runs on plain values, which it receives as they are', () => {
    expect(decideTrigger('allSucceeded', TASK, [1, 'two', { three: 3 }])).toEqual({
      kind: 'run',
      args: [1, 'two', { three: 3 }],
    });
  });

  it('allSucceeded is skipped by a skipped input, passing on who skipped first and why', () => {
    expect(decideTrigger('allSucceeded', TASK, [1, skippedB])).toEqual({
      kind: 'skip',
      reason: 'no rows today',
      origin: B,
      why: `its input ${B} was skipped: no rows today`,
    });
  });

  it('allSucceeded handed a failure is blocked (only a hand-written input can do that)', () => {
    expect(decideTrigger('allSucceeded', TASK, [failedA])).toMatchObject({
      kind: 'blocked',
      failure: { task: A, code: 'TASK_FAILED', message: 'disk full' },
    });
  });

  it('allDone runs whatever its inputs did, and receives each as a tagged outcome', () => {
    expect(decideTrigger('allDone', TASK, [7, failedA, skippedB])).toEqual({
      kind: 'run',
      args: [
        { status: 'succeeded', value: 7 },
        {
          status: 'failed',
          error: { task: A, code: 'TASK_FAILED', type: 'Error', message: 'disk full' },
        },
        { status: 'skipped', reason: 'no rows today', task: B },
      ],
    });
  });

  it('anySucceeded runs when one input succeeded, and is skipped when none did', () => {
    expect(decideTrigger('anySucceeded', TASK, [failedA, 3])).toMatchObject({ kind: 'run' });
    expect(decideTrigger('anySucceeded', TASK, [failedA, skippedB])).toEqual({
      kind: 'skip',
      reason: 'no input succeeded',
      origin: TASK,
      why: 'no input succeeded (trigger rule anySucceeded)',
    });
  });

  it('oneFailed runs when one input failed, and is skipped when none did', () => {
    expect(decideTrigger('oneFailed', TASK, [1, failedA])).toMatchObject({ kind: 'run' });
    expect(decideTrigger('oneFailed', TASK, [1, skippedB])).toMatchObject({
      kind: 'skip',
      reason: 'no input failed',
      origin: TASK,
    });
  });

  it('a task without inputs runs whatever its rule', () => {
    for (const rule of ['allSucceeded', 'allDone', 'anySucceeded', 'oneFailed'] as const)
      expect(decideTrigger(rule, TASK, [])).toEqual({ kind: 'run', args: [] });
  });
});

describe('outcomeOf: what a stored input means', () => {
  it('takes a malformed mark for a plain value, and cuts long texts', () => {
    const forged = { [OUTCOME_FIELD]: 'exploded', task: A };
    expect(outcomeOf(forged)).toEqual({ status: 'succeeded', value: forged });
    expect(outcomeOf({ [OUTCOME_FIELD]: 'skipped' })).toMatchObject({ status: 'succeeded' });
    const long = outcomeOf({ [OUTCOME_FIELD]: 'skipped', task: A, reason: 'x'.repeat(50_000) });
    expect(long.status === 'skipped' && long.reason.length).toBe(2_000);
    const failed = outcomeOf({ [OUTCOME_FIELD]: 'failed', task: A, code: 7 });
    expect(failed).toEqual({
      status: 'failed',
      error: { task: A, code: 'ERROR', type: 'Error', message: '' },
    });
  });
});
