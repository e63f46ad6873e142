/**
 * Retention and sub-plans. Review (defect 5): retention counts a plan's age from its creation, so a
 * child that ran longer than maxAgeMs was deleted as soon as it completed, before its parent task's
 * next check, which then failed for good. A child is now kept while its task is there. And a child
 * whose plan is gone (deleted by a tool that knows nothing of sub-plans) is deleted as an orphan,
 * finished or not.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { FunctionRegistry, call, subPlan } from '../../src/index.js';
import { MemoryZooKeeper } from '../../src/testing/index.js';
import { FAST_BACKOFF, memoryProcess, pause, type MemoryProcess } from '../support/memory-plan.js';

const open: MemoryProcess[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map(({ zkPlan }) => zkPlan.close().catch(() => undefined)));
});

describe('review: retention and a completed child', () => {
  it('a completed child is not swept before its parent task took its result', async () => {
    const server = new MemoryZooKeeper();
    const p = memoryProcess(
      server,
      'w',
      new FunctionRegistry().register('slow', async () => {
        await pause(200);
        return 7;
      }),
    );
    open.push(p);
    const plan = await p.zkPlan.createPlan('/plans');
    const task = await p.zkPlan.addTask(
      plan,
      subPlan({
        spec: { tasks: { slow: { fn: 'slow' } } },
        parent: '/children',
        result: 'slow',
        checkEveryMs: 500,
      }),
      [],
      { keepResult: true },
    );
    await p.zkPlan.markAsReady(plan);
    p.zkPlan.startWorkers('/plans', { count: 1, backoff: FAST_BACKOFF, retention: false });
    p.zkPlan.startWorkers('/children', {
      count: 1,
      backoff: FAST_BACKOFF,
      retention: { maxAgeMs: 100, sweepIntervalMs: 20 },
    });
    await p.zkPlan.waitForCompletion(plan, { timeoutMs: 5_000 }).catch(() => undefined);
    const status = await p.zkPlan.plans.status(plan);
    expect(status.failed.map((f) => f.failure?.message)).toEqual([]);
    expect(await p.zkPlan.getResult(task)).toBe(7);
  });

  it('deletes a child whose plan is gone, running or not', async () => {
    const server = new MemoryZooKeeper();
    let release = (): void => undefined;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const p = memoryProcess(
      server,
      'w',
      new FunctionRegistry().register('held', async () => {
        await gate;
        return 1;
      }),
    );
    open.push(p);
    const plan = await p.zkPlan.createPlan('/plans');
    const task = await p.zkPlan.addTask(
      plan,
      subPlan({ spec: { tasks: { held: { fn: 'held' } } }, parent: '/children', checkEveryMs: 10 }),
    );
    await p.zkPlan.addTask(plan, call('held'), [task]);
    await p.zkPlan.markAsReady(plan);
    p.zkPlan.startWorkers('/plans', { count: 1, backoff: FAST_BACKOFF, retention: false });
    p.zkPlan.startWorkers('/children', {
      count: 1,
      backoff: FAST_BACKOFF,
      retention: { maxAgeMs: 60_000, sweepIntervalMs: 20 },
    });
    const child = `/children/${plan.split('/').pop()}~${task.split('/').pop()}`;
    for (let i = 0; i < 400 && (await p.zk.exists(`${child}/ready`)) === undefined; i++)
      await pause(5);
    await pause(100);
    // Held by its task: retention leaves the running child alone.
    expect(await p.zk.exists(child)).toBeDefined();
    // The parent goes without plans.delete (which would take the child): the child is an orphan.
    await p.zk.deleteRecursive(plan);
    for (let i = 0; i < 400 && (await p.zk.exists(child)) !== undefined; i++) await pause(5);
    release();
    expect(await p.zk.exists(child)).toBeUndefined();
  });
});
