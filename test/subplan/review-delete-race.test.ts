/**
 * Review: plans.delete(parent) racing a check that is making the child. The delete lists the
 * parent's sub-plans after the check wrote its record but before the child's node exists (the
 * child's delete answers PLAN_NOT_FOUND and is passed over), then deletes the plan, record included.
 * The check then creates the child node, finds its record gone and throws before step 5: the
 * half-built child is left for ever (not ready: no worker runs it, retention never takes it).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { FunctionRegistry, subPlan } from '../../src/index.js';
import { MemoryZooKeeper } from '../../src/testing/index.js';
import { FAST_BACKOFF, memoryProcess, pause, type MemoryProcess } from '../support/memory-plan.js';

const PARENT = '/plans';
const open: MemoryProcess[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map(({ zkPlan }) => zkPlan.close().catch(() => undefined)));
});

describe('review: delete racing the check that makes the child', () => {
  it('no child outlives a deleted parent', async () => {
    const server = new MemoryZooKeeper();
    const fns = (): FunctionRegistry => new FunctionRegistry().register('load', () => 1);
    const admin = memoryProcess(server, 'admin', fns());
    const worker = memoryProcess(server, 'worker', fns());
    open.push(admin, worker);
    const plan = await admin.zkPlan.createPlan(PARENT);
    const task = await admin.zkPlan.addTask(
      plan,
      subPlan({ spec: { tasks: { load: { fn: 'load' } } }, checkEveryMs: 10 }),
    );
    await admin.zkPlan.markAsReady(plan);
    const child = `${PARENT}/${plan.split('/').pop()}~${task.split('/').pop()}`;
    // The delete lands right before the check creates the child's node.
    const zk = worker.zk as unknown as {
      create: (path: string, ...rest: unknown[]) => Promise<unknown>;
    };
    const create = zk.create.bind(zk);
    let deleted = false;
    zk.create = async (path: string, ...rest: unknown[]) => {
      if (path === child && !deleted) {
        deleted = true;
        await admin.zkPlan.plans.delete(plan);
      }
      return create(path, ...rest);
    };
    worker.zkPlan.startWorkers(PARENT, { count: 1, backoff: FAST_BACKOFF });
    for (let i = 0; i < 200 && !deleted; i++) await pause(5);
    expect(deleted).toBe(true);
    await pause(300);
    expect(await admin.zk.exists(plan)).toBeUndefined();
    expect(await admin.zk.exists(child)).toBeUndefined(); // fails: the half-built child stays
  });
});
