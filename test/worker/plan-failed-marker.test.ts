/**
 * The plan's `failed` marker is repaired by a scan that claims nothing (src/worker/find-task.ts):
 * removed when no task failed. A scan passes over tasks unread (those that failed in its loop's
 * hands a moment ago, those its process has just finished); such a pass must never take a skipped
 * failed task for "no task failed": the marker is what says the plan failed (status, retention).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { FunctionRegistry, PermanentError, PlanFailedError, call } from '../../src/index.js';
import { MemoryZooKeeper } from '../../src/testing/index.js';
import { TaskStore } from '../../src/store/task-store.js';
import { getTask, type Seeker } from '../../src/worker/find-task.js';
import { FAST_BACKOFF, memoryProcess, type MemoryProcess } from '../support/memory-plan.js';

const PARENT = '/plans';
const open: MemoryProcess[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map(({ zkPlan }) => zkPlan.close().catch(() => undefined)));
});

function seeker(skip: (task: string) => boolean): Seeker {
  return {
    workerId: 'scanner',
    stop: new AbortController().signal,
    taskSignal: new AbortController().signal,
    skip,
  };
}

describe("a scan's repair of the plan's failed marker", () => {
  it('keeps the marker when the failed task was passed over (it is what says the plan failed)', async () => {
    const functions = new FunctionRegistry()
      .register('breaks', () => {
        throw new PermanentError('broken for good');
      })
      .register('value', () => 1);
    const proc = memoryProcess(new MemoryZooKeeper(), 'p', functions);
    open.push(proc);
    const plan = await proc.zkPlan.createPlan(PARENT);
    const broken = await proc.zkPlan.addTask(plan, call('breaks'), [], { key: 'broken' });
    await proc.zkPlan.addTask(plan, call('value'), [broken], { key: 'after' });
    await proc.zkPlan.markAsReady(plan);
    const pool = proc.zkPlan.startWorkers(PARENT, { count: 2, backoff: FAST_BACKOFF });
    await expect(proc.zkPlan.waitForCompletion(plan, { timeoutMs: 10_000 })).rejects.toBeInstanceOf(
      PlanFailedError,
    );
    await pool.stop({ drainTimeoutMs: 0 });
    const store = new TaskStore(proc.zk);
    expect(await store.reads.planFailedMarker(plan)).toBeDefined();

    // The loop that ran `broken` passes over it during its cool-down, and over nothing else.
    expect(
      await getTask(
        store,
        plan,
        seeker((task) => task === broken),
      ),
    ).toBeUndefined();
    expect(await store.reads.planFailedMarker(plan)).toBeDefined();
    expect((await proc.zkPlan.plans.status(plan)).state).toBe('failed');
  });

  it('still removes a marker no failed task explains, once a pass has read every task', async () => {
    const proc = memoryProcess(
      new MemoryZooKeeper(),
      'p',
      new FunctionRegistry().register('value', () => 1),
    );
    open.push(proc);
    const plan = await proc.zkPlan.createPlan(PARENT);
    const task = await proc.zkPlan.addTask(plan, call('value'), [], { key: 'only' });
    await proc.zkPlan.markAsReady(plan);
    const store = new TaskStore(proc.zk);
    // Left by a retryFailed that crashed after clearing the task's failure.
    await store.markPlanFailed(plan, task, new Date());
    expect(
      await getTask(
        store,
        plan,
        seeker(() => true),
      ),
    ).toBeUndefined();
    expect(await store.reads.planFailedMarker(plan)).toBeDefined();
    // Claimed by one pass; the next reads every task, finds none failed, and removes the marker.
    expect(
      (
        await getTask(
          store,
          plan,
          seeker(() => false),
        )
      )?.task,
    ).toBe(task);
    expect(
      await getTask(
        store,
        plan,
        seeker(() => false),
      ),
    ).toBeUndefined();
    expect(await store.reads.planFailedMarker(plan)).toBeUndefined();
  });
});
