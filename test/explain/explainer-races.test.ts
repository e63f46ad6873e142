/**
 * `zk-plan why` never contradicts the registry it reads (issue 21, rough edge 1): over the
 * in-memory ZooKeeper, the explaining process's reads are interleaved with a worker's progress so
 * that the task moves on between them, as it did under load. Before the fix, both cases said
 * OWNER_GONE ("not live in the registry") for a worker the registry showed live and busy.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { FunctionRegistry } from '../../src/exec/function-registry.js';
import { call } from '../../src/exec/task-spec.js';
import { MemoryZooKeeper } from '../../src/testing/index.js';
import { FAST_BACKOFF, memoryProcess, pause, type MemoryProcess } from '../support/memory-plan.js';

const PARENT = '/plans';

/** `block`: runs until `release()` is called. */
function blocking(): { functions: FunctionRegistry; release: () => void } {
  let release = (): void => undefined;
  const gate = new Promise<void>((resolve) => (release = resolve));
  return {
    functions: new FunctionRegistry().register('block', () => gate.then(() => 'ok')),
    release,
  };
}

async function until(check: () => Promise<boolean>, what: string): Promise<void> {
  for (let tries = 0; tries < 2_000; tries++) {
    if (await check()) return;
    await pause(2);
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('explainTask reads the owner after the view and the registry after the owner', () => {
  const processes: MemoryProcess[] = [];
  afterEach(async () => {
    vi.restoreAllMocks();
    await Promise.all(processes.splice(0).map(({ zkPlan }) => zkPlan.close()));
  });

  it('a task that finishes between the read of the plan and the read of its owner is explained as done, not as an owner gone', async () => {
    const server = new MemoryZooKeeper();
    const { functions, release } = blocking();
    const worker = memoryProcess(server, 'worker', functions);
    const asker = memoryProcess(server, 'asker');
    processes.push(worker, asker);
    worker.zkPlan.startWorkers(PARENT, { count: 1, backoff: FAST_BACKOFF, retention: false });
    const plan = await asker.zkPlan.createPlan(PARENT);
    const task = await asker.zkPlan.addTask(plan, call('block'));
    await asker.zkPlan.markAsReady(plan);
    await until(
      async () => (await asker.zk.exists(`${task}/owner`)) !== undefined,
      'the task to be claimed',
    );
    expect((await asker.zkPlan.explain.task(task)).code).toBe('OWNED');

    // The first read of the owner node comes after the task finished: the view read before it still shows it running.
    const read = asker.zk.tryGetData.bind(asker.zk);
    let raced = false;
    vi.spyOn(asker.zk, 'tryGetData').mockImplementation(async (path, ...rest) => {
      if (path === `${task}/owner` && !raced) {
        raced = true;
        release();
        await until(async () => (await worker.zk.exists(task)) === undefined, 'the task to finish');
      }
      return await read(path, ...rest);
    });
    const explanation = await asker.zkPlan.explain.task(task);
    expect(raced).toBe(true);
    expect(explanation.code).toBe('DONE');
    // The registry it read shows the worker live all along.
    expect((await asker.zkPlan.listWorkers(PARENT)).map((info) => info.sessionId)).toEqual([
      worker.zk.session.id,
    ]);
  });

  it('a pool that claims the task after the plan was read is found in the registry, read after its owner node', async () => {
    const server = new MemoryZooKeeper();
    const { functions, release } = blocking();
    const asker = memoryProcess(server, 'asker');
    const worker = memoryProcess(server, 'worker', functions);
    processes.push(worker, asker);
    const plan = await asker.zkPlan.createPlan(PARENT);
    const task = await asker.zkPlan.addTask(plan, call('block'));
    await asker.zkPlan.markAsReady(plan);

    // While the plan is being listed, a pool starts, registers and takes the task.
    const list = asker.zk.tryGetChildren.bind(asker.zk);
    let started = false;
    vi.spyOn(asker.zk, 'tryGetChildren').mockImplementation(async (path, ...rest) => {
      if (path === plan && !started) {
        started = true;
        worker.zkPlan.startWorkers(PARENT, { count: 1, backoff: FAST_BACKOFF, retention: false });
        await until(
          async () => (await worker.zk.exists(`${task}/owner`)) !== undefined,
          'the task to be claimed',
        );
        await until(
          async () => (await worker.zkPlan.listWorkers(PARENT)).length === 1,
          'the pool to register',
        );
      }
      return await list(path, ...rest);
    });
    try {
      const explanation = await asker.zkPlan.explain.task(task);
      expect(started).toBe(true);
      expect(explanation).toMatchObject({
        code: 'OWNED',
        details: { session: worker.zk.session.id },
      });
    } finally {
      release();
    }
  });
});
