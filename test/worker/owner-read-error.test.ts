/**
 * A worker process reads a contended task's `owner` before it claims it (src/worker/dispatcher.ts,
 * ownerPresent). The task is reserved in the process's ClaimBook from the pick on, so that no
 * sibling loop races for it. A read that fails with an error other than NO_NODE or a connection
 * problem (NO_AUTH on an owner node nobody of this cluster may read, say) must not leave that
 * reservation behind: a task the book holds is skipped by every later pick, listing and full scan
 * of the process, so the process would never take it again, even once its owner is gone.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { FunctionRegistry } from '../../src/exec/function-registry.js';
import { call } from '../../src/exec/task-spec.js';
import { ZkError } from '../../src/errors/zk-error.js';
import { encodeValue } from '../../src/serialization/codec.js';
import { MemoryZooKeeper } from '../../src/testing/index.js';
import { FAST_BACKOFF, memoryProcess, pause } from '../support/memory-plan.js';

const PARENT = '/plans';
const NO_AUTH_RC = -102;

const stops: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const stop of stops.splice(0)) await stop();
});

describe('the owner read before a contended claim', () => {
  it('a read that fails with a non-transient error leaves the task to be taken once its owner goes', async () => {
    const server = new MemoryZooKeeper();
    const functions = new FunctionRegistry().register('step', () => 'done');
    const client = memoryProcess(server, 'client', functions).zkPlan;
    const plan = await client.createPlan(PARENT);
    const [task] = await client.addTasks(plan, [{ task: call('step'), args: [] }]);
    await client.markAsReady(plan);

    // Another worker holds the task when this process first sees it in the index.
    const holder = server.connect({ name: 'holder' });
    await holder.create(
      `${task as string}/owner`,
      encodeValue({ workerId: 'holder', claimedAt: new Date() }, 'owner record'),
      'ephemeral',
    );

    const worker = memoryProcess(server, 'worker', functions);
    const getData = worker.zk.getData.bind(worker.zk);
    let failed!: () => void;
    const failedOnce = new Promise<void>((resolve) => (failed = resolve));
    let injected = false;
    worker.zk.getData = async (path, ...rest) => {
      if (!injected && path.endsWith('/owner')) {
        injected = true;
        failed();
        throw new ZkError('getData', NO_AUTH_RC, path);
      }
      return await getData(path, ...rest);
    };
    const errors: unknown[] = [];
    worker.zkPlan.on('worker:error', ({ error }) => errors.push(error));
    const pool = worker.zkPlan.startWorkers(PARENT, { count: 2, backoff: FAST_BACKOFF });
    stops.push(() => pool.stop());

    await failedOnce;
    await pause(50);
    // The holder goes (its session ends, and its ephemeral owner with it): the task is runnable.
    holder.close();

    await client.waitForCompletion(plan, { timeoutMs: 3_000 });
    expect(errors.some((error) => error instanceof ZkError && error.code === 'NO_AUTH')).toBe(true);
  });
});
