import superjson from 'superjson';
import { describe, expect, it } from 'vitest';
import { ZkPlanError } from '../../src/errors/base-error.js';
import { SnapshotError } from '../../src/errors/snapshot-errors.js';
import { assertPlanSnapshot, type PlanSnapshot } from '../../src/snapshot/plan-snapshot.js';
import { expectThrows } from '../support/expect-error.js';

const failure = {
  type: 'PermanentError',
  message: 'no',
  code: 'PERMANENT',
  stack: undefined,
  retryable: false,
  attempts: 3,
  workerId: 'w',
  at: new Date(0),
};

/** One task in each state. */
const VALID: PlanSnapshot = {
  format: 'zk-plan-snapshot',
  version: 1,
  exportedAt: '2026-11-25T03:00:00.000Z',
  plan: '/plans/plan-0000000001',
  source: 'spec-record',
  spec: {
    tasks: {
      a: { fn: 'f' },
      b: { fn: 'f', inputs: ['a'] },
      c: { fn: 'f' },
      d: { fn: 'f', inputs: ['b'] },
      e: { fn: 'f' },
      u: { fn: 'f' },
    },
  },
  params: {},
  options: {},
  tasks: {
    a: { state: 'done', hasResult: true, result: new Map([['k', 1n]]), resultFrom: 'kept' },
    b: { state: 'running', failedTries: 1, lastError: 'boom' },
    c: { state: 'failed', failure, failedTries: 3 },
    d: { state: 'waiting', failedTries: 0 },
    e: { state: 'done', hasResult: false },
    u: { state: 'done', hasResult: true, result: undefined, resultFrom: 'input', failedTries: 2 },
  },
};

/** A copy of VALID with `change` applied to its (plain) object form. */
function broken(
  change: (
    snapshot: Record<string, unknown> & { tasks: Record<string, Record<string, unknown>> },
  ) => void,
): unknown {
  const copy = structuredClone(VALID) as unknown as Record<string, unknown> & {
    tasks: Record<string, Record<string, unknown>>;
  };
  change(copy);
  return copy;
}

describe('assertPlanSnapshot', () => {
  it('takes a snapshot in every state, also after a superjson round trip (a result of undefined, a Map, a BigInt and the failure date survive)', () => {
    expect(() => assertPlanSnapshot(VALID)).not.toThrow();
    const read = superjson.parse<PlanSnapshot>(superjson.stringify(VALID));
    expect(() => assertPlanSnapshot(read)).not.toThrow();
    expect(read).toEqual(VALID);
  });

  it.each<[string, unknown, string | undefined, string]>([
    ['not an object', 'snapshot', undefined, 'expected a snapshot object'],
    [
      'another format',
      broken((s) => (s['format'] = 'other')),
      undefined,
      'expected format "zk-plan-snapshot"',
    ],
    ['a newer version', broken((s) => (s['version'] = 2)), undefined, 'written by a newer zk-plan'],
    ['no time', broken((s) => (s['exportedAt'] = 'yesterday')), undefined, '"exportedAt"'],
    ['no plan', broken((s) => delete s['plan']), undefined, '"plan"'],
    ['an unknown source', broken((s) => (s['source'] = 'guess')), undefined, '"source"'],
    ['no spec', broken((s) => (s['spec'] = [])), undefined, '"spec"'],
    ['params not an object', broken((s) => (s['params'] = ['x'])), undefined, '"params"'],
    ['options not an object', broken((s) => (s['options'] = null)), undefined, '"options"'],
    [
      'tasks not an object',
      broken((s) => ((s as Record<string, unknown>)['tasks'] = 3)),
      undefined,
      '"tasks"',
    ],
    ['gaps not sentences', broken((s) => (s['gaps'] = [1])), undefined, '"gaps"'],
    ['a key without a state', broken((s) => delete s.tasks['d']), 'd', 'has no state'],
    [
      'a state for no key',
      broken((s) => (s.tasks['z'] = { state: 'done', hasResult: false })),
      'z',
      "is not a task of the snapshot's spec",
    ],
    [
      'an unknown state',
      broken((s) => (s.tasks['d'] = { state: 'pending', failedTries: 0 })),
      'd',
      'unknown state "pending"',
    ],
    [
      'done without hasResult',
      broken((s) => delete s.tasks['e']?.['hasResult']),
      'e',
      '"hasResult"',
    ],
    [
      'hasResult without a result',
      broken((s) => delete s.tasks['a']?.['result']),
      'a',
      'no "result"',
    ],
    [
      'a result from nowhere',
      broken((s) => ((s.tasks['a'] as Record<string, unknown>)['resultFrom'] = 'cache')),
      'a',
      '"resultFrom"',
    ],
    ['failed without a failure', broken((s) => delete s.tasks['c']?.['failure']), 'c', '"failure"'],
    [
      'a failure of null',
      broken((s) => ((s.tasks['c'] as Record<string, unknown>)['failure'] = null)),
      'c',
      '"failure"',
    ],
    [
      'an empty failure',
      broken((s) => ((s.tasks['c'] as Record<string, unknown>)['failure'] = {})),
      'c',
      '"failure"',
    ],
    [
      'a failure that is a list',
      broken((s) => ((s.tasks['c'] as Record<string, unknown>)['failure'] = [])),
      'c',
      '"failure"',
    ],
    [
      'a failure with bad attempts',
      broken((s) => ((s.tasks['c']?.['failure'] as Record<string, unknown>)['attempts'] = 1.5)),
      'c',
      '"failure.attempts"',
    ],
    [
      'a failure at an invalid time',
      broken(
        (s) =>
          ((s.tasks['c']?.['failure'] as Record<string, unknown>)['at'] = new Date(Number.NaN)),
      ),
      'c',
      '"failure.at"',
    ],
    [
      'a failure without its time',
      broken((s) => ((s.tasks['c']?.['failure'] as Record<string, unknown>)['at'] = '2026-01-01')),
      'c',
      '"failure.at"',
    ],
    [
      'unfinished without tries',
      broken((s) => delete s.tasks['d']?.['failedTries']),
      'd',
      '"failedTries"',
    ],
    [
      'negative tries',
      broken((s) => ((s.tasks['u'] as Record<string, unknown>)['failedTries'] = -1)),
      'u',
      '"failedTries"',
    ],
    [
      'a last error that is not text',
      broken((s) => ((s.tasks['b'] as Record<string, unknown>)['lastError'] = 5)),
      'b',
      '"lastError"',
    ],
  ])('refuses %s with SNAPSHOT_INVALID naming the task', (_what, value, key, message) => {
    const error = expectThrows(() => assertPlanSnapshot(value), SnapshotError);
    expect([error.code, error.key]).toEqual(['SNAPSHOT_INVALID', key]);
    expect(error.message).toContain(message);
  });
});

describe('SnapshotError', () => {
  it('is a ZkPlanError with a stable code, the task key in its message and field, and the plan as its path', () => {
    const error = new SnapshotError(
      'SNAPSHOT_RESULT_MISSING',
      'extract',
      'is done, but …',
      '/plans/plan-0000000001',
    );
    expect(error).toBeInstanceOf(ZkPlanError);
    expect([error.name, error.code, error.key, error.path]).toEqual([
      'SnapshotError',
      'SNAPSHOT_RESULT_MISSING',
      'extract',
      '/plans/plan-0000000001',
    ]);
    expect(error.message).toBe('Task "extract": is done, but …');
  });
});
