/**
 * A task's `ready` whose reply was lost is not sent again once the task moved on (found by the
 * write audit of issue 19): the builder's create landed, a worker ran and finished the task and
 * deleted its `ready`, and the builder's client, reconnecting in the same session, would make it
 * ready again, runnable with its inputs gone, before the finisher deletes the task node.
 */
import { describe, expect, it } from 'vitest';
import { FunctionRegistry } from '../../src/exec/function-registry.js';
import { call } from '../../src/exec/task-spec.js';
import { ManualScheduler, MemoryZooKeeper } from '../../src/testing/index.js';
import { FAST_BACKOFF, memoryProcess, type MemoryProcess } from '../support/memory-plan.js';

const PARENT = '/plans';
const flush = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Closes the processes while their last operations land. */
async function closeAll(
  manual: ManualScheduler,
  processes: readonly MemoryProcess[],
): Promise<void> {
  let closed = false;
  const closing = Promise.all(processes.map(({ zkPlan }) => zkPlan.close())).finally(
    () => (closed = true),
  );
  while (!closed) {
    await manual.drain();
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  await closing;
}

describe("a task's ready sent again after a lost reply", () => {
  it('is not made again once the task ran and its ready was deleted: the finished task never becomes runnable again', async () => {
    const manual = new ManualScheduler();
    const server = new MemoryZooKeeper({ scheduler: manual });
    let runs = 0;
    const functions = new FunctionRegistry().register('count', () => ++runs);
    const builder = memoryProcess(server, 'builder', functions);
    const worker = memoryProcess(server, 'worker', functions);
    const step = async (
      client: string,
      until: (op: string, path: string) => boolean,
    ): Promise<void> => {
      for (let steps = 0; steps < 10_000; steps++) {
        await flush();
        if (!manual.pending().includes(client)) continue;
        const applied = manual.step(client);
        if (until(applied.op, applied.path)) return;
      }
      throw new Error(`${client} never applied the awaited operation`);
    };
    const creating = builder.zkPlan.createPlan(PARENT);
    await step('builder', (op, path) => op === 'create' && path.endsWith('/history')); // the plan's last child (after `runnable`)
    const plan = await creating;
    const readying = builder.zkPlan.markAsReady(plan);
    await step('builder', (op) => op === 'setData');
    await readying;
    builder.zk.loseNextReply((op, path) => op === 'create' && path.endsWith('/ready'), {
      reconnect: false,
    });
    const adding = builder.zkPlan
      .addTasks(plan, [{ task: call('count') }])
      .catch((error: unknown) => error);
    await step('builder', (op, path) => op === 'create' && path.endsWith('/ready'));
    const task = `${plan}/${server.children(plan).find((name) => name.startsWith('task-')) ?? '?'}`;
    expect(server.exists(`${task}/ready`)).toBe(true); // landed; the builder does not know

    // The worker runs the task and finishes it, up to the delete of its owner node (its task node is next).
    worker.zkPlan.startWorkers(PARENT, { count: 1, backoff: FAST_BACKOFF, retention: false });
    await step('worker', (op, path) => op === 'delete' && path === `${task}/owner`);
    expect(runs).toBe(1);
    expect(server.children(task)).toEqual([]);

    // The builder is back: its create is not sent again onto the finished task.
    builder.zk.reconnect();
    for (let quiet = 0; quiet < 5;) {
      await flush();
      if (manual.pending().includes('builder')) {
        manual.step('builder');
        quiet = 0;
      } else quiet += 1;
    }
    expect(server.exists(`${task}/ready`)).toBe(false);
    await manual.drain();
    await adding;
    await new Promise((resolve) => setTimeout(resolve, 20)); // the worker's loop looks again
    await manual.drain();
    expect(runs).toBe(1);
    await closeAll(manual, [builder, worker]);
  });
});
