/** The live worker registry over the in-memory ZooKeeper: what a pool registers, when it changes, and when it goes. */
import { afterEach, describe, expect, it } from 'vitest';
import { FunctionRegistry } from '../../src/exec/function-registry.js';
import type { TaskContext } from '../../src/exec/task-context.js';
import { call } from '../../src/exec/task-spec.js';
import { parseWorkerInfo } from '../../src/registry/worker-info.js';
import { encodeValue } from '../../src/serialization/codec.js';
import { MemoryZooKeeper } from '../../src/testing/index.js';
import type { ZkPlanEvents } from '../../src/worker/worker-events.js';
import { FAST_BACKOFF, memoryProcess, pause, type MemoryProcess } from '../support/memory-plan.js';

const PARENT = '/plans';
const VERSION = (
  JSON.parse((await import('node:fs')).readFileSync('package.json', 'utf8')) as { version: string }
).version;

describe('worker registry', () => {
  const processes: MemoryProcess[] = [];
  afterEach(async () => {
    await Promise.all(processes.splice(0).map(({ zkPlan }) => zkPlan.close()));
  });

  async function until(condition: () => Promise<boolean>, timeoutMs = 5_000): Promise<void> {
    const deadline = performance.now() + timeoutMs;
    // A read while a new session opens fails: that is "not yet".
    while (!(await condition().catch(() => false))) {
      if (performance.now() > deadline) throw new Error('condition not met in time');
      await pause(10);
    }
  }

  it('a pool registers its id, host, pid, version, functions and loops; its running tasks follow within about a second; stop removes it', async () => {
    const server = new MemoryZooKeeper();
    let release: () => void = () => undefined;
    const blocked = new Promise<void>((resolve) => (release = resolve));
    const functions = new FunctionRegistry()
      .register('block', async (_ctx: TaskContext<unknown[]>) => await blocked)
      .register('noop', () => null);
    const proc = memoryProcess(server, 'a', functions);
    processes.push(proc);
    const pool = proc.zkPlan.startWorkers(PARENT, {
      count: 3,
      backoff: FAST_BACKOFF,
      retention: false,
      workerId: 'etl-1',
    });
    await until(async () => (await proc.zkPlan.listWorkers(PARENT)).length === 1);
    const [info] = await proc.zkPlan.listWorkers(PARENT);
    expect(info).toMatchObject({
      id: 'etl-1',
      pid: process.pid,
      version: VERSION,
      functions: ['block', 'noop'],
      loops: 3,
      running: [],
      allowInline: false,
      sessionId: proc.zk.sessionId,
    });

    const plan = await proc.zkPlan.createPlan(PARENT);
    const task = await proc.zkPlan.addTask(plan, call('block'));
    await proc.zkPlan.markAsReady(plan);
    await until(
      async () => (await proc.zkPlan.listWorkers(PARENT))[0]?.running.includes(task) === true,
      3_000,
    );
    release();
    await proc.zkPlan.waitForCompletion(plan, { timeoutMs: 5_000 });
    await until(
      async () => (await proc.zkPlan.listWorkers(PARENT))[0]?.running.length === 0,
      3_000,
    );

    await pool.stop();
    expect(await proc.zkPlan.listWorkers(PARENT)).toEqual([]);
    expect(await proc.zkPlan.plans.list(PARENT)).toHaveLength(1); // the registry is not a plan
  });

  it('the node goes with its session and comes back on the next one', async () => {
    const server = new MemoryZooKeeper();
    const proc = memoryProcess(server, 'a');
    processes.push(proc);
    proc.zkPlan.startWorkers(PARENT, {
      count: 1,
      backoff: FAST_BACKOFF,
      retention: false,
      workerId: 'w',
    });
    await until(async () => (await proc.zkPlan.listWorkers(PARENT)).length === 1);
    const before = proc.zk.sessionId;
    proc.zk.expireSession();
    await until(
      async () => (await proc.zkPlan.listWorkers(PARENT))[0]?.sessionId === proc.zk.sessionId,
    );
    expect(proc.zk.sessionId).not.toBe(before);
  });

  it('two pools with the same worker id: the second reports it and does not take over the first one’s node', async () => {
    const server = new MemoryZooKeeper();
    const [a, b] = [memoryProcess(server, 'a'), memoryProcess(server, 'b')];
    processes.push(a as MemoryProcess, b as MemoryProcess);
    const errors: ZkPlanEvents['worker:error'][0][] = [];
    b?.zkPlan.on('worker:error', (event) => errors.push(event));
    a?.zkPlan.startWorkers(PARENT, {
      count: 1,
      backoff: FAST_BACKOFF,
      retention: false,
      workerId: 'same',
    });
    await until(async () => ((await a?.zkPlan.listWorkers(PARENT)) ?? []).length === 1);
    b?.zkPlan.startWorkers(PARENT, {
      count: 1,
      backoff: FAST_BACKOFF,
      retention: false,
      workerId: 'same',
    });
    await until(async () => errors.length > 0);
    expect(errors[0]?.error).toMatchObject({ code: 'ILLEGAL_STATE' });
    expect((await a?.zkPlan.listWorkers(PARENT))?.[0]?.sessionId).toBe(a?.zk.sessionId);
  });

  it('skips a registry node it cannot read', async () => {
    expect(parseWorkerInfo('/p/zk-plan-workers/x', Buffer.from('garbage'))).toBeUndefined();
    expect(parseWorkerInfo('/p/zk-plan-workers/x', encodeValue({ id: 'x' }, 'x'))).toBeUndefined();
    expect(parseWorkerInfo('/p/zk-plan-workers/x', null)).toBeUndefined();
  });
});
