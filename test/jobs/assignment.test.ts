/**
 * The manager's decision (src/jobs/assignment.ts), pure: which live workers each job's items go
 * to, what it keeps when it cannot decide, and how it fits every job's assignment into one node.
 */
import { describe, expect, it } from 'vitest';
import {
  decideAssignment,
  fitAssignment,
  sameAssignment,
  type AssignmentDecision,
} from '../../src/jobs/assignment.js';
import type { StoredJob, WorkPool } from '../../src/jobs/job-definition.js';
import type { AssignmentRecord, JobWorkerInfo } from '../../src/jobs/job-store.js';
import { StrategyRegistry } from '../../src/jobs/strategies.js';

function job(
  name: string,
  fn: string,
  workPool: WorkPool,
  options: { strategy?: string; disabled?: boolean } = {},
): StoredJob {
  return {
    name,
    fn,
    workPool,
    mode: 'continuous',
    strategy: options.strategy ?? 'evenly',
    disabled: options.disabled ?? false,
    misfire: 'runOnce',
    failover: true,
    retries: 3,
    keepRuns: 100,
    updatedAt: '2026-11-26T00:00:00Z',
  };
}

function worker(id: string, jobFunctions: readonly string[]): JobWorkerInfo {
  return {
    id,
    host: 'host',
    pid: 1,
    jobFunctions,
    leaseMs: 3_000,
    startedAt: '2026-11-26T00:00:00Z',
  };
}

const NONE_DISABLED: ReadonlySet<string> = new Set();

function record(
  jobs: AssignmentRecord['jobs'],
  problems: AssignmentRecord['problems'] = {},
): AssignmentRecord {
  return { epoch: 4, jobs, problems, manager: 'w1', writtenAt: '2026-11-26T00:00:00Z' };
}

describe('decideAssignment', () => {
  const workers = [
    worker('w1', ['mail']),
    worker('w2', ['report']),
    worker('w3', ['mail', 'report']),
  ];

  it("spreads each job's items over the live workers that registered its function, by its strategy", () => {
    const decision = decideAssignment(
      [
        job('mail', 'mail', { items: ['m1', 'm2', 'm3', 'm4'] }),
        job('report', 'report', { shards: 2 }),
      ],
      workers,
      undefined,
      new StrategyRegistry(),
      NONE_DISABLED,
    );
    expect(decision).toEqual({
      jobs: { mail: { w1: ['m1', 'm2'], w3: ['m3', 'm4'] }, report: { w2: ['0'], w3: ['1'] } },
      problems: {},
    });
  });

  it('starts from the current assignment, so that the items stay where they are', () => {
    const current = record({ mail: { w3: ['m1', 'm2'], gone: ['m3'] } });
    const decision = decideAssignment(
      [job('mail', 'mail', { items: ['m1', 'm2', 'm3', 'm4'] })],
      workers,
      current,
      new StrategyRegistry(),
      NONE_DISABLED,
    );
    expect(decision.jobs).toEqual({ mail: { w1: ['m3', 'm4'], w3: ['m1', 'm2'] } });
  });

  it('leaves a disabled job out altogether', () => {
    const decision = decideAssignment(
      [job('mail', 'mail', { items: ['m1'] }, { disabled: true })],
      workers,
      undefined,
      new StrategyRegistry(),
      NONE_DISABLED,
    );
    expect(decision).toEqual({ jobs: {}, problems: {} });
  });

  it('records a job whose function no live worker registered, and assigns it nothing', () => {
    const decision = decideAssignment(
      [job('archive', 'archive', { shards: 3 })],
      workers,
      undefined,
      new StrategyRegistry(),
      NONE_DISABLED,
    );
    expect(decision).toEqual({
      jobs: {},
      problems: {
        archive: 'no live job worker registered the function "archive": its 3 items wait for one',
      },
    });
  });

  it('keeps the current assignment, less the workers that are gone, for a strategy unknown here, and records why', () => {
    const current = record({ mail: { w1: ['m1', 'm2'], gone: ['m3'] } });
    const decision = decideAssignment(
      [job('mail', 'mail', { items: ['m1', 'm2', 'm3'] }, { strategy: 'by-tenant' })],
      workers,
      current,
      new StrategyRegistry(),
      NONE_DISABLED,
    );
    expect(decision).toEqual({
      jobs: { mail: { w1: ['m1', 'm2'], w3: [] } },
      problems: {
        mail: 'strategy "by-tenant" is not registered on the manager: use evenly, rendezvous or evenlyRendezvous, or register it on every job worker (the job worker option strategies)',
      },
    });
  });

  it('keeps the current assignment, less the workers that are gone, for a strategy that fails, and records its error', () => {
    const strategies = new StrategyRegistry().register('broken', () => {
      throw new Error('no tenants table');
    });
    const current = record({ mail: { w3: ['m2'], gone: ['m1'] } });
    const decision = decideAssignment(
      [job('mail', 'mail', { items: ['m1', 'm2'] }, { strategy: 'broken' })],
      workers,
      current,
      strategies,
      NONE_DISABLED,
    );
    expect(decision).toEqual({
      jobs: { mail: { w1: [], w3: ['m2'] } },
      problems: { mail: 'Invalid strategy: strategy "broken" threw: no tenants table' },
    });
  });

  it('leaves disabled workers out: their items go to the others, and a flag of a worker that is gone changes nothing', () => {
    const current = record({ mail: { w1: ['m1', 'm2'], w3: ['m3', 'm4'] } });
    const decision = decideAssignment(
      [job('mail', 'mail', { items: ['m1', 'm2', 'm3', 'm4'] })],
      workers,
      current,
      new StrategyRegistry(),
      new Set(['w1', 'gone']),
    );
    expect(decision).toEqual({ jobs: { mail: { w3: ['m1', 'm2', 'm3', 'm4'] } }, problems: {} });
  });

  it('keeps a disabled worker out of the assignment it keeps for a strategy unknown here', () => {
    const current = record({ mail: { w1: ['m1'], w3: ['m2'] } });
    const decision = decideAssignment(
      [job('mail', 'mail', { items: ['m1', 'm2'] }, { strategy: 'by-tenant' })],
      workers,
      current,
      new StrategyRegistry(),
      new Set(['w1']),
    );
    expect(decision.jobs).toEqual({ mail: { w3: ['m2'] } });
  });

  it('records a job whose every live worker with its function is disabled, and assigns it nothing', () => {
    const decision = decideAssignment(
      [job('mail', 'mail', { items: ['m1', 'm2'] }), job('report', 'report', { shards: 3 })],
      workers,
      undefined,
      new StrategyRegistry(),
      new Set(['w1', 'w2', 'w3']),
    );
    expect(decision).toEqual({
      jobs: {},
      problems: {
        mail: 'all 2 live job workers that registered the function "mail" are disabled: its 2 items wait until one is enabled (enableWorker, zk-plan jobs enable-worker)',
        report:
          'all 2 live job workers that registered the function "report" are disabled: its 3 items wait until one is enabled (enableWorker, zk-plan jobs enable-worker)',
      },
    });
    const one = decideAssignment(
      [job('mail', 'mail', { items: ['m1'] })],
      [worker('w1', ['mail'])],
      undefined,
      new StrategyRegistry(),
      new Set(['w1']),
    );
    expect(one.problems['mail']).toBe(
      'the one live job worker that registered the function "mail" is disabled: its 1 item waits until one is enabled (enableWorker, zk-plan jobs enable-worker)',
    );
  });

  it('decides each job on its own: a problem with one leaves the others assigned', () => {
    const decision = decideAssignment(
      [
        job('archive', 'archive', { shards: 1 }),
        job('mail', 'mail', { items: ['m1'] }, { strategy: 'nope' }),
        job('report', 'report', { shards: 1 }),
      ],
      workers,
      undefined,
      new StrategyRegistry(),
      NONE_DISABLED,
    );
    expect(Object.keys(decision.problems).sort()).toEqual(['archive', 'mail']);
    expect(decision.jobs).toEqual({ mail: { w1: [], w3: [] }, report: { w2: ['0'], w3: [] } });
  });
});

describe('fitAssignment', () => {
  const ids = (prefix: string, count: number): string[] =>
    Array.from({ length: count }, (_, index) => `${prefix}-${'x'.repeat(40)}-${index}`);
  const sizeOf = (decision: AssignmentDecision): number =>
    Buffer.byteLength(JSON.stringify({ jobs: decision.jobs, problems: decision.problems }));
  const leftUnassigned = (budget: number): string =>
    `left unassigned: the assignment of every job together would exceed ${budget} bytes, what one ZooKeeper node holds; make its pool (or others) smaller`;
  const decision: AssignmentDecision = {
    jobs: {
      big: { w1: ids('big', 20) },
      twin2: { w1: ids('twin2', 10) },
      twin1: { w1: ids('twin1', 10) },
      small: { w1: ['s1'] },
    },
    problems: { other: 'strategy "x" is not registered' },
  };

  it('leaves a decision that fits, to the byte, as it is', () => {
    expect(fitAssignment(decision, sizeOf(decision))).toEqual(decision);
  });

  it('leaves the job with the most items unassigned, and records why, until the rest fits', () => {
    const budget = sizeOf(decision) - 1;
    const fitted = fitAssignment(decision, budget);
    expect(Object.keys(fitted.jobs).sort()).toEqual(['small', 'twin1', 'twin2']);
    expect(fitted.problems).toEqual({
      other: 'strategy "x" is not registered',
      big: leftUnassigned(budget),
    });
    expect(sizeOf(fitted)).toBeLessThanOrEqual(budget);
    // The decision it was given is unchanged.
    expect(Object.keys(decision.jobs)).toHaveLength(4);
    expect(decision.problems).toEqual({ other: 'strategy "x" is not registered' });
  });

  it('of two jobs with as many items, leaves the first by name unassigned first', () => {
    const withoutBig = fitAssignment(decision, sizeOf(decision) - 1);
    const budget = sizeOf(withoutBig) - 1;
    const fitted = fitAssignment(decision, budget);
    expect(Object.keys(fitted.jobs).sort()).toEqual(['small', 'twin2']);
    expect(Object.keys(fitted.problems).sort()).toEqual(['big', 'other', 'twin1']);
  });

  it('leaves every job unassigned when not even the smallest fits, and stops there', () => {
    const fitted = fitAssignment(decision, 10);
    expect(fitted.jobs).toEqual({});
    expect(fitted.problems).toEqual({
      other: 'strategy "x" is not registered',
      big: leftUnassigned(10),
      twin1: leftUnassigned(10),
      twin2: leftUnassigned(10),
      small: leftUnassigned(10),
    });
  });
});

describe('sameAssignment', () => {
  const jobs = { mail: { w1: ['m1', 'm2'], w3: ['m3'] }, report: { w2: ['0'] } };

  it('holds when every job gives each worker the same items and the problems are the same, in whatever key order', () => {
    const stored = record(
      { report: { w2: ['0'] }, mail: { w3: ['m3'], w1: ['m1', 'm2'] } },
      { b: 'two', a: 'one' },
    );
    expect(sameAssignment(stored, { jobs, problems: { a: 'one', b: 'two' } })).toBe(true);
    expect(sameAssignment(record({}), { jobs: {}, problems: {} })).toBe(true);
  });

  it('fails when an item moved, a worker or job is added or gone, or a problem changed', () => {
    const decision = { jobs, problems: { a: 'one' } };
    expect(
      sameAssignment(
        record({ mail: { w1: ['m1'], w3: ['m2', 'm3'] }, report: { w2: ['0'] } }, { a: 'one' }),
        decision,
      ),
    ).toBe(false);
    expect(
      sameAssignment(record({ ...jobs, mail: { ...jobs.mail, w4: [] } }, { a: 'one' }), decision),
    ).toBe(false);
    expect(sameAssignment(record({ mail: jobs.mail }, { a: 'one' }), decision)).toBe(false);
    expect(sameAssignment(record(jobs, { a: 'other' }), decision)).toBe(false);
    expect(sameAssignment(record(jobs, {}), decision)).toBe(false);
  });
});
