import { rootContainer as container } from '../../src/di/container.js';
import { describe, expect, it } from 'vitest';
import { FunctionRegistry, ZkPlan, call } from '../../src/index.js';
import { MemoryZooKeeper } from '../../src/testing/index.js';

/**
 * A drain that gives a task back while its function ignores the abort (defect 10): from then on
 * the first worker's claim writes nothing, so it can neither delete the owner node of the worker
 * that took the task over nor finish the task a second time.
 */
describe('a task given back by a drain', () => {
  it('is completed once, by the worker that took it over; the late result of the first is dropped', async () => {
    const server = new MemoryZooKeeper();
    let release!: () => void;
    const ignoring = new Promise<void>((resolve) => (release = resolve));
    let firstStarted!: () => void;
    const started = new Promise<void>((resolve) => (firstStarted = resolve));
    const first = new ZkPlan(
      server.connect({ name: 'first' }),
      new FunctionRegistry().register('work', async () => {
        firstStarted();
        await ignoring; // ignores its signal
        return 'late';
      }),
      { container: container.createChildContainer() },
    );
    const parent = '/drain';
    const plan = await first.createPlan(parent);
    const task = await first.addTask(plan, call('work'), [], { keepResult: true });
    await first.markAsReady(plan);
    const firstPool = first.startWorkers(parent, {
      backoff: { initial: 5, max: 20 },
      drainTimeoutMs: 0,
    });
    await started;
    await firstPool.stop({ drainTimeoutMs: 0 }); // aborts, waits its grace, then gives the task back
    expect(server.exists(`${task}/owner`)).toBe(false);

    let secondOwnerSeen = false;
    const second = new ZkPlan(
      server.connect({ name: 'second' }),
      new FunctionRegistry().register('work', async () => {
        secondOwnerSeen = server.exists(`${task}/owner`);
        release(); // the first function returns now, while the second worker holds the task
        await new Promise((resolve) => setTimeout(resolve, 50));
        return 'second';
      }),
      { container: container.createChildContainer() },
    );
    const failures: string[] = [];
    first.on('task:completed', () =>
      failures.push('the first worker completed a task it had given back'),
    );
    const secondPool = second.startWorkers(parent, { backoff: { initial: 5, max: 20 } });
    await second.waitForCompletion(plan, { timeoutMs: 10_000 });
    await secondPool.stop();
    expect(secondOwnerSeen).toBe(true);
    expect(await second.getResult(task)).toBe('second');
    expect(failures).toEqual([]);
    await first.close();
    await second.close();
  });

  it('is not given back while its result is being handed on: no other worker can take it mid-finish', async () => {
    const server = new MemoryZooKeeper();
    const firstClient = server.connect({ name: 'first' });
    const first = new ZkPlan(
      firstClient,
      new FunctionRegistry().register('work', () => 'done'),
      { container: container.createChildContainer() },
    );
    const parent = '/drain-finish';
    const plan = await first.createPlan(parent);
    const task = await first.addTask(plan, call('work'), [], { keepResult: true });
    // Hold the first worker's finish right before it deletes the stored result: that delete and
    // every one sent after it (the owner's and the node's travel with it) wait, in their order.
    let resume!: () => void;
    const held = new Promise<void>((resolve) => (resume = resolve));
    let reachedDelete!: () => void;
    const reached = new Promise<void>((resolve) => (reachedDelete = resolve));
    let holding = false;
    const deleteOriginal = firstClient.delete.bind(firstClient);
    firstClient.delete = async (...args: Parameters<typeof deleteOriginal>) => {
      if (args[0] === `${task}/result`) {
        holding = true;
        reachedDelete();
      }
      if (holding) await held;
      return await deleteOriginal(...args);
    };
    await first.markAsReady(plan);
    const firstPool = first.startWorkers(parent, {
      backoff: { initial: 5, max: 20 },
      drainTimeoutMs: 0,
    });
    await reached;
    const stopping = firstPool.stop({ drainTimeoutMs: 0 }); // its abort grace passes while the finish is held
    const second = new ZkPlan(
      server.connect({ name: 'second' }),
      new FunctionRegistry().register('work', () => 'other'),
      { container: container.createChildContainer() },
    );
    const claimedBySecond: string[] = [];
    second.on('task:claimed', (event) => claimedBySecond.push(event.task));
    const secondPool = second.startWorkers(parent, { backoff: { initial: 5, max: 20 } });
    await new Promise((resolve) => setTimeout(resolve, 1_300)); // past the pool's 1 s abort grace
    expect(server.exists(`${task}/owner`)).toBe(true); // still the first worker's
    resume();
    await stopping;
    await second.waitForCompletion(plan, { timeoutMs: 10_000 });
    await secondPool.stop();
    expect(claimedBySecond).toEqual([]);
    expect(await second.getResult(task)).toBe('done');
    await first.close();
    await second.close();
  });
});
