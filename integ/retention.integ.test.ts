import { describe, expect, it } from 'vitest';
import { FunctionRegistry, PermanentError, PlanFailedError, call } from '../src/index.js';
import { childrenOf } from './support/raw-nodes.js';
import { useZooKeeper } from './support/zk-test-env.js';

const env = useZooKeeper('retention');
const FAST = { backoff: { initial: 10, max: 50 } };

describe('retention of finished plans', () => {
  it('deletes the oldest finished plans beyond maxCount, never a plan that can still run', async () => {
    const functions = new FunctionRegistry()
      .register('one', () => 1)
      .register('broken', () => {
        throw new PermanentError('broken');
      })
      .register('never', () => new Promise(() => undefined));
    const zkPlan = await env.zkPlan({ functions });
    const parent = env.root();
    const finished: string[] = [];
    for (let index = 0; index < 4; index++) {
      const plan = await zkPlan.createPlan(parent);
      await zkPlan.addTask(plan, call('one'));
      await zkPlan.markAsReady(plan);
      finished.push(plan);
    }
    const failed = await zkPlan.createPlan(parent);
    const failedTask = await zkPlan.addTask(failed, call('broken'));
    await zkPlan.addTask(failed, call('one'), [failedTask]);
    await zkPlan.markAsReady(failed);
    const running = await zkPlan.createPlan(parent);
    await zkPlan.addTask(running, call('never'));
    await zkPlan.markAsReady(running);
    const building = await zkPlan.createPlan(parent); // not ready: still being built
    const pool = zkPlan.startWorkers(parent, {
      ...FAST,
      count: 3,
      drainTimeoutMs: 0,
      retention: { maxCount: 2, sweepIntervalMs: 200 },
    });
    await Promise.all(
      finished.map((plan) =>
        zkPlan.waitForCompletion(plan, { timeoutMs: 20_000 }).catch(() => undefined),
      ),
    );
    await expect(zkPlan.waitForCompletion(failed, { timeoutMs: 20_000 })).rejects.toBeInstanceOf(
      PlanFailedError,
    );
    // Finished: 4 completed and 1 failed; the newest 2 of them stay (the last completed one and the failed one).
    await expect
      .poll(
        async () =>
          (await childrenOf(zkPlan.zk, parent))?.filter((name) => name.startsWith('plan-')).length,
        { timeout: 10_000 },
      )
      .toBe(4);
    const left = (await childrenOf(zkPlan.zk, parent))!.map((name) => `${parent}/${name}`);
    expect(left).toEqual(expect.arrayContaining([finished[3], failed, running, building]));
    // The sweeper lets go of its lock after its last delete: the count above can be seen before that.
    await expect
      .poll(async () => (await childrenOf(zkPlan.zk, parent))?.includes('zk-plan-retention'), {
        timeout: 10_000,
      })
      .toBe(false);
    await pool.stop({ drainTimeoutMs: 0 });
  });

  it('is applied by one process at a time: while another holds the lock, nothing is deleted', async () => {
    const functions = new FunctionRegistry().register('one', () => 1);
    const zkPlan = await env.zkPlan({ functions });
    const other = await env.client();
    const parent = env.root();
    const plans = [await zkPlan.createPlan(parent), await zkPlan.createPlan(parent)];
    for (const plan of plans) {
      await zkPlan.addTask(plan, call('one'));
      await zkPlan.markAsReady(plan);
    }
    await other.create(`${parent}/zk-plan-retention`, null, 'ephemeral');
    const pool = zkPlan.startWorkers(parent, {
      ...FAST,
      retention: { maxCount: 0, sweepIntervalMs: 100 },
    });
    await Promise.all(plans.map((plan) => zkPlan.waitForCompletion(plan, { timeoutMs: 20_000 })));
    const errors: Error[] = [];
    zkPlan.on('worker:error', ({ error }) => errors.push(error));
    await new Promise((resolve) => setTimeout(resolve, 600)); // several sweep intervals pass while the lock is held elsewhere
    expect(
      (await childrenOf(zkPlan.zk, parent))?.filter((name) => name.startsWith('plan-')),
    ).toHaveLength(2);
    other.close(); // the holder's session ends: its lock goes, and this process sweeps
    await expect
      .poll(
        async () =>
          (await childrenOf(zkPlan.zk, parent))?.filter((name) => name.startsWith('plan-')).length,
        { timeout: 10_000 },
      )
      .toBe(0);
    await pool.stop();
    expect(errors).toEqual([]);
  });
});
