import { describe, expect, it } from 'vitest';
import type { FailurePolicy } from '../../src/config/plan-options.js';
import type { AttemptRecord, TaskFailure } from '../../src/store/failure-policy.js';
import type { TaskState } from '../../src/store/task-state.js';
import { summarizePlan, unfedDeps, type TaskSnapshot } from '../../src/plan/plan-status.js';

const PLAN = '/plans/plan-0000000001';
const path = (n: number): string => `${PLAN}/task-${String(n).padStart(10, '0')}`;
const dep = (task: number, serial: number): string =>
  `${path(task)}/dep-${String(serial).padStart(10, '0')}`;

const failure: TaskFailure = {
  type: 'Error',
  message: 'boom',
  code: 'TASK_FAILED',
  stack: undefined,
  retryable: true,
  attempts: 3,
  workerId: 'w',
  at: new Date(0),
};

function snap(
  n: number,
  state: TaskState,
  options: {
    deps?: string[];
    feeds?: string[];
    failure?: TaskFailure;
    attempts?: AttemptRecord;
  } = {},
): TaskSnapshot {
  return {
    task: path(n),
    state,
    deps: options.deps ?? [],
    feeds: options.feeds ?? [],
    ...(options.failure ? { failure: options.failure } : {}),
    ...(options.attempts ? { attempts: options.attempts } : {}),
  };
}

function summary(
  tasks: TaskSnapshot[],
  failurePolicy: FailurePolicy = 'continue',
  orphanDeps: string[] = [],
  ready = true,
) {
  return summarizePlan({
    plan: PLAN,
    ready,
    failurePolicy,
    priority: 0,
    tasks,
    orphanDeps: new Set(orphanDeps),
  });
}

describe('summarizePlan', () => {
  it('reports an empty plan as completed', () => {
    const status = summary([]);
    expect(status).toMatchObject({
      plan: PLAN,
      state: 'completed',
      failurePolicy: 'continue',
      failed: [],
      blocked: [],
      retrying: [],
    });
    expect(status.counts.remaining).toBe(0);
  });

  it('reports a plan not marked ready as building, and running once ready', () => {
    const tasks = [
      snap(1, 'runnable', { feeds: [dep(2, 0)] }),
      snap(2, 'waiting', { deps: [dep(2, 0)] }),
    ];
    expect(summary(tasks, 'continue', [], false).state).toBe('building');
    expect(summary(tasks).state).toBe('running');
    expect(summary(tasks).blocked).toEqual([]);
  });

  it('blocks a whole chain behind a failed task, each with its reason', () => {
    // 1 failed → 2 → 3 → 4, and 5 runs on its own.
    const tasks = [
      snap(1, 'failed', { feeds: [dep(2, 0)], failure }),
      snap(2, 'waiting', { deps: [dep(2, 0)], feeds: [dep(3, 0)] }),
      snap(3, 'waiting', { deps: [dep(3, 0)], feeds: [dep(4, 1)] }),
      snap(4, 'waiting', { deps: [dep(4, 1)] }),
      snap(5, 'owned'),
    ];
    const status = summary(tasks);
    expect(status.failed).toEqual([{ task: path(1), failure }]);
    expect(status.blocked).toEqual([
      { task: path(2), reason: `its input comes from failed task ${path(1)}` },
      { task: path(3), reason: `its input comes from blocked task ${path(2)}` },
      { task: path(4), reason: `its input comes from blocked task ${path(3)}` },
    ]);
    expect(status.counts).toMatchObject({ failed: 1, blocked: 3, running: 1, remaining: 5 });
  });

  it('blocks a chain listed in reverse order too (blocking spreads until nothing changes)', () => {
    const tasks = [
      snap(4, 'waiting', { deps: [dep(4, 0)] }),
      snap(3, 'waiting', { deps: [dep(3, 0)], feeds: [dep(4, 0)] }),
      snap(2, 'waiting', { deps: [dep(2, 0)], feeds: [dep(3, 0)] }),
      snap(1, 'failed', { feeds: [dep(2, 0)] }),
    ];
    expect(
      summary(tasks)
        .blocked.map(({ task }) => task)
        .sort(),
    ).toEqual([path(2), path(3), path(4)]);
    expect(summary(tasks).state).toBe('failed');
  });

  it('with continue, fails the plan only once nothing that can run is left', () => {
    const stillRunning = [
      snap(1, 'failed', { feeds: [dep(2, 0)] }),
      snap(2, 'waiting', { deps: [dep(2, 0)] }),
      snap(3, 'runnable'),
    ];
    expect(summary(stillRunning, 'continue').state).toBe('running');
    expect(summary(stillRunning.slice(0, 2), 'continue').state).toBe('failed');
  });

  it('with failFast, fails the plan as soon as a task failed', () => {
    const tasks = [snap(1, 'failed'), snap(2, 'runnable'), snap(3, 'owned')];
    expect(summary(tasks, 'failFast').state).toBe('failed');
    expect(summary(tasks, 'failFast').failurePolicy).toBe('failFast');
  });

  it('blocks a task whose input has no producer, but only when the dep was checked again and still exists', () => {
    const tasks = [snap(1, 'waiting', { deps: [dep(1, 0)] })];
    expect(summary(tasks).blocked).toEqual([]); // not confirmed: its producer may just have finished
    const status = summary(tasks, 'continue', [dep(1, 0)]);
    expect(status.blocked).toEqual([
      {
        task: path(1),
        reason: `its input ${dep(1, 0)} has no producer: no task's prov-* points at it`,
      },
    ]);
    // Blocked forever but nothing failed: the plan is neither failed nor completed.
    expect(status.state).toBe('running');
  });

  it('blocks a dependent of a task blocked by an orphan input', () => {
    const tasks = [
      snap(1, 'waiting', { deps: [dep(1, 0)], feeds: [dep(2, 0)] }),
      snap(2, 'waiting', { deps: [dep(2, 0)] }),
    ];
    expect(summary(tasks, 'continue', [dep(1, 0)]).blocked.map(({ task }) => task)).toEqual([
      path(1),
      path(2),
    ]);
  });

  it('never reports a failed task as blocked', () => {
    const tasks = [
      snap(1, 'failed', { feeds: [dep(2, 0)] }),
      snap(2, 'failed', { deps: [dep(2, 0)] }),
    ];
    const status = summary(tasks);
    expect(status.blocked).toEqual([]);
    expect(status.failed.map(({ task }) => task)).toEqual([path(1), path(2)]);
  });

  it("leaves abandoned tasks (half-deleted, or a dead builder's) out: debris neither counts nor keeps the plan open", () => {
    const status = summary([snap(1, 'abandoned'), snap(2, 'building')]);
    expect(status.counts).toMatchObject({ building: 1, remaining: 1, total: 1 });
    expect(status.state).toBe('running');
    expect(summary([snap(1, 'abandoned')]).state).toBe('completed');
    // A failed task with only debris beside it: nothing can run any more.
    expect(summary([snap(1, 'failed'), snap(2, 'abandoned')]).state).toBe('failed');
  });

  it('lists tasks waiting for a retry, not failed ones that have attempts too', () => {
    const attempts: AttemptRecord = {
      failures: 2,
      notBefore: new Date(5_000),
      lastFailure: { ...failure, message: 'try 2 failed' },
    };
    const status = summary([
      snap(1, 'runnable', { attempts }),
      snap(2, 'failed', { attempts, failure }),
    ]);
    expect(status.retrying).toEqual([
      { task: path(1), failures: 2, nextTryAt: new Date(5_000), lastError: 'try 2 failed' },
    ]);
  });

  it('counts finishing and running tasks as live', () => {
    const tasks = [snap(1, 'failed'), snap(2, 'finishable')];
    expect(summary(tasks).state).toBe('running');
    expect(summary(tasks).counts.finishing).toBe(1);
  });
});

describe('unfedDeps', () => {
  it('lists the deps that no task feeds', () => {
    const tasks = [
      snap(1, 'runnable', { feeds: [dep(2, 0)] }),
      snap(2, 'waiting', { deps: [dep(2, 0), dep(2, 1)] }),
      snap(3, 'waiting', { deps: [dep(3, 5)] }),
    ];
    expect(unfedDeps(tasks)).toEqual([dep(2, 1), dep(3, 5)]);
  });

  it('is empty when every dep is fed', () => {
    expect(
      unfedDeps([
        snap(1, 'runnable', { feeds: [dep(2, 0)] }),
        snap(2, 'waiting', { deps: [dep(2, 0)] }),
      ]),
    ).toEqual([]);
    expect(unfedDeps([])).toEqual([]);
  });
});
