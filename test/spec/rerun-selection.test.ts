import { describe, expect, it } from 'vitest';
import { SnapshotError } from '../../src/errors/snapshot-errors.js';
import { InvalidArgumentError } from '../../src/errors/usage-errors.js';
import type { PlanSnapshot } from '../../src/snapshot/plan-snapshot.js';
import { rerunFrom, rerunSnapshot } from '../../src/snapshot/rerun.js';
import { rerunSelection } from '../../src/spec/rerun-selection.js';
import type { PlanSpec } from '../../src/spec/plan-spec.js';
import { expectThrows } from '../support/expect-error.js';
import { SNAPSHOT_SPEC } from '../support/snapshot-fixture.js';

const selected = (spec: PlanSpec, from: string, failed: readonly string[] = []): string[] =>
  [...rerunSelection(spec, from, failed)].sort();

/** a → b → d, a → c → d, d → e; f alone; g takes a twice. */
const DIAMOND: PlanSpec = {
  tasks: {
    a: { fn: 'f' },
    b: { fn: 'f', inputs: ['a'] },
    c: { fn: 'f', inputs: ['a'] },
    d: { fn: 'f', inputs: ['b', 'c'] },
    e: { fn: 'f', inputs: ['d'] },
    f: { fn: 'f' },
    g: { fn: 'f', inputs: ['a', 'a'] },
  },
};

describe('rerunSelection (which tasks a rerun runs again)', () => {
  it('is the task and everything downstream of it, directly or not', () => {
    expect(selected(SNAPSHOT_SPEC, 'extract')).toEqual(['audit', 'clean', 'extract', 'report']);
    expect(selected(SNAPSHOT_SPEC, 'clean')).toEqual(['clean', 'report']);
    expect(selected(SNAPSHOT_SPEC, 'report')).toEqual(['report']);
    expect(selected(DIAMOND, 'a')).toEqual(['a', 'b', 'c', 'd', 'e', 'g']);
    expect(selected(DIAMOND, 'c')).toEqual(['c', 'd', 'e']);
    expect(selected(DIAMOND, 'f')).toEqual(['f']);
  });

  it("'failed' starts from every failed task", () => {
    expect(selected(SNAPSHOT_SPEC, 'failed', ['flaky'])).toEqual(['flaky', 'late']);
    expect(selected(DIAMOND, 'failed', ['b', 'f'])).toEqual(['b', 'd', 'e', 'f']);
  });

  it("'failed' means the failed tasks even when a task is keyed so", () => {
    const spec: PlanSpec = {
      tasks: { failed: { fn: 'f' }, after: { fn: 'f', inputs: ['failed'] }, other: { fn: 'f' } },
    };
    expect(selected(spec, 'failed', ['other'])).toEqual(['other']);
  });

  it('refuses a key the spec does not have, naming it and listing the keys', () => {
    const error = expectThrows(() => rerunSelection(SNAPSHOT_SPEC, 'nope', []), SnapshotError);
    expect([error.code, error.key]).toEqual(['RERUN_UNKNOWN_KEY', 'nope']);
    expect(error.message).toContain('its keys: extract, clean, report, audit, flaky, late');
    // Not a key because it is an inherited property name.
    expect(
      expectThrows(() => rerunSelection(SNAPSHOT_SPEC, 'toString', []), SnapshotError).code,
    ).toBe('RERUN_UNKNOWN_KEY');
  });

  it("refuses 'failed' when nothing failed", () => {
    expect(
      expectThrows(() => rerunSelection(SNAPSHOT_SPEC, 'failed', []), SnapshotError).code,
    ).toBe('RERUN_NOTHING_FAILED');
  });
});

describe('rerunSnapshot and rerunFrom (the snapshot a rerun imports, and its options)', () => {
  const failure = {
    type: 'PermanentError',
    message: 'no',
    code: 'PERMANENT',
    stack: undefined,
    retryable: false,
    attempts: 1,
    workerId: 'w',
    at: new Date(0),
  };
  const snapshot: PlanSnapshot = {
    format: 'zk-plan-snapshot',
    version: 1,
    exportedAt: new Date(0).toISOString(),
    plan: '/plans/plan-0000000001',
    source: 'spec-record',
    spec: SNAPSHOT_SPEC,
    params: {},
    options: {},
    tasks: {
      extract: { state: 'done', hasResult: true, result: 10, resultFrom: 'kept' },
      clean: { state: 'done', hasResult: true, result: 11, resultFrom: 'kept', failedTries: 2 },
      report: { state: 'done', hasResult: true, result: 121, resultFrom: 'kept' },
      audit: { state: 'done', hasResult: true, result: 1010, resultFrom: 'kept' },
      flaky: { state: 'failed', failure, failedTries: 1 },
      late: { state: 'waiting', failedTries: 0 },
    },
  };

  it('sets the selected tasks back to runnable with no tries, and leaves the others as the plan has them', () => {
    const rerun = rerunSnapshot(snapshot, 'clean');
    expect(rerun.tasks).toEqual({
      ...snapshot.tasks,
      clean: { state: 'runnable', failedTries: 0 },
      report: { state: 'runnable', failedTries: 0 },
    });
    expect(rerunSnapshot(snapshot, 'failed').tasks).toEqual({
      ...snapshot.tasks,
      flaky: { state: 'runnable', failedTries: 0 },
      late: { state: 'runnable', failedTries: 0 },
    });
  });

  it('checks the options, naming the plan', () => {
    expect(rerunFrom('/p/plan-1', { from: 'clean' })).toBe('clean');
    for (const options of [
      undefined,
      null,
      {},
      { from: '' },
      { from: 3 },
      { from: 'clean', extra: true },
    ]) {
      const error = expectThrows(() => rerunFrom('/p/plan-1', options), InvalidArgumentError);
      expect(error.path).toBe('/p/plan-1');
    }
  });
});
