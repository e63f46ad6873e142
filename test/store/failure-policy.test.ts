import { describe, expect, it } from 'vitest';
import {
  DEFAULT_RETRY_POLICY,
  retryDelayMs,
  type ResolvedRetryPolicy,
} from '../../src/config/plan-options.js';
import { PlanAbortedError } from '../../src/errors/plan-errors.js';
import {
  InlineDisabledError,
  MalformedNodeError,
  OwnershipLostError,
  PermanentError,
  TaskExecutionError,
  TaskTimeoutError,
  UnknownFunctionError,
  UnserializableValueError,
  ValueTooLargeError,
} from '../../src/errors/task-errors.js';
import { ResultTooLargeError } from '../../src/errors/value-errors.js';
import { ZkError } from '../../src/errors/zk-error.js';
import {
  decideAfterFailure,
  describeFailure,
  isPermanentError,
  judgeFailure,
  parseTaskFailure,
} from '../../src/store/failure-policy.js';

const TASK = '/plans/plan-0000000001/task-0000000002';
const policy = (overrides: Partial<ResolvedRetryPolicy> = {}): ResolvedRetryPolicy => ({
  ...DEFAULT_RETRY_POLICY,
  ...overrides,
});

describe('judgeFailure: charged to the task, and permanent?', () => {
  it.each<[string, unknown]>([
    ['a thrown Error (wrapped)', new TaskExecutionError(TASK, 'boom', new Error('boom'))],
    ['a thrown non-Error (wrapped)', new TaskExecutionError(TASK, 'oops', 'oops')],
    ['a timeout', new TaskTimeoutError(TASK, 50)],
    ['an unknown function', new UnknownFunctionError('nope', TASK, ['a'])],
    ['inline code on a worker without allowInline', new InlineDisabledError(TASK)],
  ])('%s is charged and may be retried', (_title, error) => {
    expect(judgeFailure(error)).toEqual({ charged: true, permanent: false });
  });

  it.each<[string, unknown]>([
    ['an unstorable result', new UnserializableValueError('The result', 'a function')],
    ['a value larger than a znode', new ValueTooLargeError('The result', 2_000_000, 1_000_000)],
    ['a result over maxResultBytes', new ResultTooLargeError(20, 10)],
    ['a malformed node', new MalformedNodeError(`${TASK}/attempts`, 'not superjson')],
    [
      'a PermanentError thrown by the function',
      new TaskExecutionError(TASK, 'gone', new PermanentError('gone')),
    ],
    [
      'a PermanentError of another copy of zk-plan (matched by name)',
      new TaskExecutionError(
        TASK,
        'gone',
        Object.assign(new Error('gone'), { name: 'PermanentError' }),
      ),
    ],
  ])('%s is charged and permanent', (_title, error) => {
    expect(judgeFailure(error)).toEqual({ charged: true, permanent: true });
  });

  it.each<[string, unknown]>([
    ['a ZooKeeper fault', new ZkError('create', -4, TASK)],
    ['an expired session', new ZkError('create', -112, TASK)],
    ['lost ownership', new OwnershipLostError(TASK, 'the session expired')],
    ['a failFast abort', new PlanAbortedError('/plans/plan-0000000001', TASK)],
    ['a plain Error that did not come through the function wrapper', new Error('boom')],
    ['a PermanentError not wrapped as a task failure', new PermanentError('gone')],
    ['a string', 'boom'],
    ['undefined', undefined],
  ])('%s is infrastructure: never charged', (_title, error) => {
    expect(judgeFailure(error)).toEqual({ charged: false, permanent: false });
  });
});

describe('isPermanentError', () => {
  it('recognises PermanentError, also by name, and nothing else', () => {
    expect(isPermanentError(new PermanentError('x'))).toBe(true);
    expect(isPermanentError(Object.assign(new Error('x'), { name: 'PermanentError' }))).toBe(true);
    expect(isPermanentError(new Error('x'))).toBe(false);
    expect(isPermanentError({ name: 'PermanentError' })).toBe(false);
    expect(isPermanentError(undefined)).toBe(false);
  });
});

describe('decideAfterFailure', () => {
  const now = 1_000_000;

  it('counts the failure and schedules the next try after the retry delay', () => {
    expect(decideAfterFailure(0, false, policy(), now)).toEqual({
      failTask: false,
      failures: 1,
      notBefore: now + 1_000,
    });
    expect(decideAfterFailure(1, false, policy(), now)).toEqual({
      failTask: false,
      failures: 2,
      notBefore: now + 2_000,
    });
  });

  it('fails the task when the tries are used up', () => {
    expect(decideAfterFailure(2, false, policy(), now)).toEqual({
      failTask: true,
      failures: 3,
      notBefore: now,
    });
    expect(decideAfterFailure(0, false, policy({ maxAttempts: 1 }), now)).toEqual({
      failTask: true,
      failures: 1,
      notBefore: now,
    });
    // More failures recorded than allowed (the policy was lowered): still fails.
    expect(decideAfterFailure(7, false, policy({ maxAttempts: 3 }), now).failTask).toBe(true);
  });

  it('fails a permanent failure at once, whatever tries are left', () => {
    expect(decideAfterFailure(0, true, policy({ maxAttempts: 10 }), now)).toEqual({
      failTask: true,
      failures: 1,
      notBefore: now,
    });
  });

  it('never schedules beyond maxDelayMs', () => {
    const decision = decideAfterFailure(
      30,
      false,
      policy({ maxAttempts: 100, maxDelayMs: 5_000 }),
      now,
    );
    expect(decision).toEqual({ failTask: false, failures: 31, notBefore: now + 5_000 });
  });
});

describe('retryDelayMs', () => {
  it('grows by the multiplier from initialDelayMs, capped at maxDelayMs', () => {
    const delays = [1, 2, 3, 4, 5, 6, 7].map((attempt) => retryDelayMs(policy(), attempt));
    expect(delays).toEqual([1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 60_000]);
  });

  it('treats attempt 0 (or below) as the first retry', () => {
    expect(retryDelayMs(policy(), 0)).toBe(1_000);
    expect(retryDelayMs(policy(), -3)).toBe(1_000);
  });

  it('is 0 with no initial delay, and constant with multiplier 1', () => {
    expect(retryDelayMs(policy({ initialDelayMs: 0 }), 5)).toBe(0);
    expect(retryDelayMs(policy({ multiplier: 1, initialDelayMs: 250 }), 9)).toBe(250);
  });

  it('stays finite and at the cap for a huge attempt count', () => {
    expect(retryDelayMs(policy(), 10_000)).toBe(60_000);
    expect(retryDelayMs(policy({ maxDelayMs: 0 }), 3)).toBe(0);
  });
});

describe('describeFailure', () => {
  const at = new Date('2030-01-02T03:04:05Z');

  it("records the function's own error: its class, message, code and stack", () => {
    const original = Object.assign(new TypeError('bad input'), { code: 'E_BAD_INPUT' });
    const failure = describeFailure(
      new TaskExecutionError(TASK, 'bad input', original),
      false,
      2,
      'w1',
      at,
    );
    expect(failure).toEqual({
      type: 'TypeError',
      message: `Task ${TASK} failed: bad input`,
      code: 'E_BAD_INPUT',
      stack: original.stack,
      retryable: true,
      attempts: 2,
      workerId: 'w1',
      at,
    });
  });

  it("uses the zk-plan code when the function's error has none (or a non-string one)", () => {
    const failure = describeFailure(
      new TaskExecutionError(TASK, 'x', Object.assign(new Error('x'), { code: 42 })),
      false,
      1,
      'w',
      at,
    );
    expect(failure.code).toBe('TASK_FAILED');
    expect(failure.type).toBe('Error');
  });

  it("keeps a PermanentError's code and marks it not retryable", () => {
    const failure = describeFailure(
      new TaskExecutionError(
        TASK,
        'no such customer',
        new PermanentError('no such customer', { code: 'NO_SUCH_CUSTOMER' }),
      ),
      true,
      1,
      'w',
      at,
    );
    expect(failure).toMatchObject({
      type: 'PermanentError',
      code: 'NO_SUCH_CUSTOMER',
      retryable: false,
    });
  });

  it('describes a thrown non-Error through its wrapper', () => {
    const wrapper = new TaskExecutionError(TASK, 'a string', 'a string');
    const failure = describeFailure(wrapper, false, 1, 'w', at);
    expect(failure).toMatchObject({
      type: 'TaskExecutionError',
      code: 'TASK_FAILED',
      stack: wrapper.stack,
    });
  });

  it('describes zk-plan errors by their class and code', () => {
    const failure = describeFailure(new TaskTimeoutError(TASK, 50), false, 3, 'w', at);
    expect(failure).toMatchObject({ type: 'TaskTimeoutError', code: 'TASK_TIMEOUT', attempts: 3 });
    expect(failure.message).toContain('50 ms');
  });

  it('describes an error that is not a task failure by itself, not by its cause', () => {
    const syntax = Object.assign(new SyntaxError('Unexpected token'), { code: 'E_SYNTAX' });
    const malformed = new MalformedNodeError(`${TASK}/attempts`, 'not superjson', syntax);
    expect(describeFailure(malformed, true, 1, 'w', at)).toMatchObject({
      type: 'MalformedNodeError',
      code: 'MALFORMED_NODE',
      stack: malformed.stack,
      retryable: false,
    });
    const wrapped = new Error('could not read', { cause: syntax });
    expect(describeFailure(wrapped, false, 1, 'w', at)).toMatchObject({
      type: 'Error',
      message: 'could not read',
      code: 'ERROR',
      stack: wrapped.stack,
    });
  });

  it('describes anything else thrown as an ERROR', () => {
    expect(describeFailure('plain text', false, 1, 'w', at)).toMatchObject({
      type: 'Error',
      message: 'plain text',
      code: 'ERROR',
    });
    expect(describeFailure(new RangeError('r'), false, 1, 'w', at)).toMatchObject({
      type: 'RangeError',
      message: 'r',
      code: 'ERROR',
    });
  });
});

describe('parseTaskFailure: a stored failure, checked field by field', () => {
  const at = new Date('2026-11-26T10:00:00Z');
  const stored = {
    type: 'Error',
    message: 'disk full',
    code: 'DISK_FULL',
    stack: 'Error: disk full',
    retryable: true,
    attempts: 2,
    workerId: 'w/1',
    at,
  };

  it('reads back what describeFailure records, and a failure without a stack', () => {
    expect(parseTaskFailure(stored)).toEqual(stored);
    expect(parseTaskFailure(describeFailure(new Error('x'), true, 1, 'w/2', at))).toMatchObject({
      message: 'x',
      retryable: false,
      attempts: 1,
    });
    expect(parseTaskFailure({ ...stored, stack: undefined })).toEqual({
      ...stored,
      stack: undefined,
    });
  });

  it('takes retryable only when it is exactly true', () => {
    expect(parseTaskFailure({ ...stored, retryable: 'yes' })?.retryable).toBe(false);
    expect(parseTaskFailure({ ...stored, retryable: false })?.retryable).toBe(false);
  });

  it.each<[string, unknown]>([
    ['null', null],
    ['undefined', undefined],
    ['a string', 'disk full'],
    ['a number', 42],
    ['a type that is not text', { ...stored, type: 1 }],
    ['a message that is not text', { ...stored, message: null }],
    ['a code that is not text', { ...stored, code: 7 }],
    ['a worker id that is not text', { ...stored, workerId: ['w'] }],
    ['a stack that is not text', { ...stored, stack: 3 }],
    ['attempts that are not a whole number', { ...stored, attempts: 1.5 }],
    ['attempts as text', { ...stored, attempts: '2' }],
    ['a time that is not a date', { ...stored, at: '2026-11-26' }],
    ['an invalid date', { ...stored, at: new Date(Number.NaN) }],
  ])('refuses %s', (_title, value) => {
    expect(parseTaskFailure(value)).toBeUndefined();
  });
});
