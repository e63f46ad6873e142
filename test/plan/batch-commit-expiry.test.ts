/**
 * A batch whose commit marker landed but whose reply was lost as the builder's session expired: the
 * builder learns only that its add failed, while the workers, seeing a dead builder and a marker,
 * complete the batch and run it. The builder's clean-up must then leave the batch alone (it is the
 * workers' now), or it deletes tasks that run, and their dependents never get their inputs.
 * Suspected by a review of the spawn work, shown here; in-memory ZooKeeper.
 */
import { describe, expect, it } from 'vitest';
import { FunctionRegistry } from '../../src/exec/function-registry.js';
import type { TaskContext } from '../../src/exec/task-context.js';
import { call } from '../../src/exec/task-spec.js';
import { MemoryZooKeeper } from '../../src/testing/index.js';
import { FAST_BACKOFF, memoryProcess, pause } from '../support/memory-plan.js';

const PARENT = '/batch-expiry';

async function until(check: () => boolean, what: string): Promise<void> {
  for (let waited = 0; waited < 20_000; waited += 10) {
    if (check()) return;
    await pause(10);
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('a batch committed as its builder’s session expired', () => {
  it('is completed by the workers and left alone by the builder’s clean-up: each task runs once, the dependent gets its input', async () => {
    let release = (): void => undefined;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const runs: string[] = [];
    const functions = new FunctionRegistry()
      .register('slow', async (ctx: TaskContext) => {
        runs.push(ctx.task);
        await held;
        return 20;
      })
      .register('double', (ctx: TaskContext, value: number) => {
        runs.push(ctx.task);
        return value * 2;
      });
    const server = new MemoryZooKeeper();
    const admin = memoryProcess(server, 'admin', functions);
    const builder = memoryProcess(server, 'builder', functions);
    const worker = memoryProcess(server, 'worker', functions);
    const plan = await admin.zkPlan.createPlan(PARENT);
    await admin.zkPlan.markAsReady(plan);
    const pool = worker.zkPlan.startWorkers(PARENT, { count: 2, backoff: FAST_BACKOFF });

    // The marker lands; its reply is lost, the session expires, and the builder stays cut off.
    builder.zk.loseNextReply((op, path) => op === 'create' && path.startsWith(`${plan}/batch-`), {
      expireSession: true,
      reconnect: false,
    });
    const adding = builder.zkPlan
      .addTasks(plan, [
        { task: call('slow') },
        { task: call('double'), args: [0], options: { keepResult: true } },
      ])
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    // The workers complete the dead builder's committed batch and start its first task.
    await until(() => runs.length === 1, 'the worker to start the batch’s first task');
    const [slow] = runs;

    // The builder is back, on a new session: its add fails, and its clean-up must not touch the batch.
    builder.zk.reconnect();
    expect(await adding).toMatchObject({ code: 'SESSION_EXPIRED' });
    expect(server.exists(slow as string)).toBe(true);

    release();
    await admin.zkPlan.waitForCompletion(plan, { timeoutMs: 20_000 });
    await pool.stop();
    expect(runs).toHaveLength(2);
    const view = await admin.zkPlan.plans.describe(plan);
    const doubled = view.tasks.find((task) => task.fn === 'double');
    expect(doubled?.state).toBe('done');
    expect(await admin.zkPlan.getResult(doubled?.task as string)).toBe(40);
  });
});
