/**
 * The largest spawn call: MAX_SPAWNED_TASKS tasks under a parent path of ~60 characters fit the
 * record and the marker (a review found that 10 000 did not, and failed only after the commit); and
 * a call whose record could not fit, under a very long plan path, is refused before anything is
 * written. In-memory ZooKeeper.
 */
import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../../src/errors/usage-errors.js';
import { FunctionRegistry } from '../../src/exec/function-registry.js';
import type { TaskContext } from '../../src/exec/task-context.js';
import { call } from '../../src/exec/task-spec.js';
import { MAX_SPAWNED_TASKS } from '../../src/spawn/spawn-record.js';
import { MemoryZooKeeper } from '../../src/testing/index.js';
import { FAST_BACKOFF, memoryProcess } from '../support/memory-plan.js';

const PARENT = '/zk-plan/production/team-data-platform/nightly-etl-xxxxxxxx';

describe('the largest spawn call', () => {
  it(`spawns ${MAX_SPAWNED_TASKS} tasks under ${PARENT}`, { timeout: 300_000 }, async () => {
    let spawned: number | undefined;
    let error: unknown;
    const registry = new FunctionRegistry()
      .register('wide', async (ctx: TaskContext) => {
        try {
          const paths = await ctx.spawn(
            Array.from({ length: MAX_SPAWNED_TASKS }, (_, i) => ({ task: call('noop', i) })),
          );
          spawned = paths.length;
        } catch (caught) {
          error = caught;
          throw caught;
        }
        return 'ok';
      })
      .register('noop', () => null);
    const server = new MemoryZooKeeper();
    const proc = memoryProcess(server, 'p', registry);
    await proc.zk.ensurePath(PARENT);
    const plan = await proc.zkPlan.createPlan(PARENT, { maxAttempts: 1 });
    await proc.zkPlan.addTask(plan, call('wide'));
    await proc.zkPlan.markAsReady(plan);
    const pool = proc.zkPlan.startWorkers(PARENT, { count: 1, backoff: FAST_BACKOFF });
    const deadline = Date.now() + 240_000;
    while (spawned === undefined && error === undefined && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 200));
    await pool.stop();
    expect(error).toBeUndefined();
    expect(spawned).toBe(MAX_SPAWNED_TASKS);
  });

  it('a call whose record could not fit one znode under a very long plan path is refused before anything is written', async () => {
    const longParent = `/deep/${'segment-'.repeat(150)}end`;
    let refused: unknown;
    const registry = new FunctionRegistry()
      .register('wide', async (ctx: TaskContext) => {
        refused = await ctx
          .spawn(Array.from({ length: MAX_SPAWNED_TASKS }, (_, i) => ({ task: call('noop', i) })))
          .catch((error: unknown) => error);
        return 'ok';
      })
      .register('noop', () => null);
    const server = new MemoryZooKeeper();
    const proc = memoryProcess(server, 'p', registry);
    await proc.zk.ensurePath(longParent);
    const plan = await proc.zkPlan.createPlan(longParent);
    const wide = await proc.zkPlan.addTask(plan, call('wide'));
    await proc.zkPlan.markAsReady(plan);
    const pool = proc.zkPlan.startWorkers(longParent, { backoff: FAST_BACKOFF });
    await proc.zkPlan.waitForCompletion(plan, { timeoutMs: 20_000 });
    await pool.stop();
    expect(refused).toBeInstanceOf(InvalidArgumentError);
    expect(String(refused)).toMatch(/spawn them in calls of at most \d+/);
    // Nothing was written for it: the only task the plan ever had is the one that tried.
    expect(server.children(`${plan}/history`)).toEqual([wide.slice(plan.length + 1)]);
    expect(server.exists(`${plan}/spawned`)).toBe(false);
  });
});
