/**
 * Concurrency limits over the in-memory ZooKeeper: worker pools in two processes that never run
 * more tasks of a key at once than its limit, whatever happens to them. The pure slot choice:
 * limit-record.test.ts.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../../src/errors/usage-errors.js';
import { FunctionRegistry } from '../../src/exec/function-registry.js';
import type { TaskContext } from '../../src/exec/task-context.js';
import { call } from '../../src/exec/task-spec.js';
import { encodeSlot } from '../../src/limits/limit-record.js';
import { MemoryZooKeeper } from '../../src/testing/index.js';
import { FAST_BACKOFF, memoryProcess, pause, type MemoryProcess } from '../support/memory-plan.js';
import { expectRejects } from '../support/expect-error.js';

const PARENT = '/plans';

describe('concurrency limits over the in-memory ZooKeeper', () => {
  const processes: MemoryProcess[] = [];
  afterEach(async () => {
    await Promise.all(processes.splice(0).map(({ zkPlan }) => zkPlan.close()));
  });

  function gauge(): {
    functions: FunctionRegistry;
    max: () => number;
    running: () => number;
    runs: () => number;
  } {
    let running = 0;
    let max = 0;
    let runs = 0;
    const functions = new FunctionRegistry().register(
      'limited',
      async (ctx: TaskContext<unknown[]>) => {
        running += 1;
        runs += 1;
        max = Math.max(max, running);
        try {
          await pause(Number(ctx.params[0]));
        } finally {
          running -= 1;
        }
        return runs;
      },
    );
    return { functions, max: () => max, running: () => running, runs: () => runs };
  }

  it('never runs more tasks of a key at once than its limit, across processes and plans; tasks of other keys are not held back', async () => {
    const server = new MemoryZooKeeper();
    const { functions, max, runs } = gauge();
    const procs = ['a', 'b'].map((name) => memoryProcess(server, name, functions));
    processes.push(...procs);
    const [first] = procs as [MemoryProcess];
    await first.zkPlan.limits(PARENT).set('warehouse', 2);
    const plans = await Promise.all([
      first.zkPlan.createPlan(PARENT),
      first.zkPlan.createPlan(PARENT),
    ]);
    for (const plan of plans) {
      await first.zkPlan.addTasks(
        plan,
        Array.from({ length: 8 }, () => ({
          task: call('limited', 15),
          options: { concurrencyKey: 'warehouse' },
        })),
      );
      await first.zkPlan.markAsReady(plan);
    }
    for (const { zkPlan } of procs)
      zkPlan.startWorkers(PARENT, { count: 4, backoff: FAST_BACKOFF, retention: false });
    await Promise.all(
      plans.map((plan) => first.zkPlan.waitForCompletion(plan, { timeoutMs: 20_000 })),
    );
    expect(runs()).toBe(16);
    expect(max()).toBe(2);
    expect(await first.zkPlan.limits(PARENT).get('warehouse')).toEqual({ limit: 2, holders: [] });
  });

  it('a raised limit lets waiting tasks start at once; a key without a limit holds nothing back', async () => {
    const server = new MemoryZooKeeper();
    const { functions, max, running } = gauge();
    const proc = memoryProcess(server, 'a', functions);
    processes.push(proc);
    await proc.zkPlan.limits(PARENT).set('api', 0); // nothing with the key runs
    const plan = await proc.zkPlan.createPlan(PARENT);
    await proc.zkPlan.addTasks(plan, [
      ...Array.from({ length: 4 }, () => ({
        task: call('limited', 200),
        options: { concurrencyKey: 'api' },
      })),
      ...Array.from({ length: 3 }, () => ({
        task: call('limited', 200),
        options: { concurrencyKey: 'no-limit-set' },
      })),
    ]);
    await proc.zkPlan.markAsReady(plan);
    proc.zkPlan.startWorkers(PARENT, { count: 8, backoff: FAST_BACKOFF, retention: false });
    while (running() < 3) await pause(2);
    await pause(30);
    expect(running()).toBe(3); // the unlimited key's three, none of the held ones
    await proc.zkPlan.limits(PARENT).set('api', 3);
    while (running() < 6) await pause(2);
    await proc.zkPlan.waitForCompletion(plan, { timeoutMs: 10_000 });
    expect(max()).toBe(6);
  });

  it("a holder's slot comes back when its session expires, and its task runs again", async () => {
    const server = new MemoryZooKeeper();
    const { functions, runs } = gauge();
    const [a, b] = ['a', 'b'].map((name) => memoryProcess(server, name, functions)) as [
      MemoryProcess,
      MemoryProcess,
    ];
    processes.push(a, b);
    await a.zkPlan.limits(PARENT).set('k', 1);
    const plan = await a.zkPlan.createPlan(PARENT);
    // The long one first (its priority): a's one loop holds the key's one slot with it.
    await a.zkPlan.addTasks(plan, [
      { task: call('limited', 100_000), options: { concurrencyKey: 'k', priority: 1 } },
      { task: call('limited', 1), options: { concurrencyKey: 'k' } },
    ]);
    await a.zkPlan.markAsReady(plan);
    a.zkPlan.startWorkers(PARENT, {
      count: 1,
      backoff: FAST_BACKOFF,
      retention: false,
      drainTimeoutMs: 10,
    });
    while (runs() < 1) await pause(2);
    expect((await b.zkPlan.limits(PARENT).get('k'))?.holders).toHaveLength(1);
    b.zkPlan.startWorkers(PARENT, {
      count: 2,
      backoff: FAST_BACKOFF,
      retention: false,
      drainTimeoutMs: 10,
    }); // it may take the long task on: close without waiting it out
    await pause(50);
    expect(runs()).toBe(1); // b waits: the one slot is a's
    server.expireSession(a.zk.sessionId as string); // a is cut off: its owner node and its slot go
    while (runs() < 2) await pause(2);
    expect((await b.zkPlan.limits(PARENT).get('k'))?.holders.length).toBeLessThanOrEqual(1);
  });

  it('lists every limit under a parent by key, with its holders, and skips nodes it did not write', async () => {
    const server = new MemoryZooKeeper();
    const proc = memoryProcess(server, 'a');
    processes.push(proc);
    expect(await proc.zkPlan.limits(PARENT).list()).toEqual([]);
    await proc.zkPlan.limits(PARENT).set('warehouse/eu 1', 3);
    await proc.zkPlan.limits(PARENT).set('api', 1);
    await proc.zk.create(`${PARENT}/zk-plan-limits/%E0%A4%A`, Buffer.from('2')); // a malformed escape: not a key's node
    const at = new Date('2026-11-24T10:00:00Z');
    const slot = `${PARENT}/zk-plan-limits/api/slot-0`;
    await proc.zk.create(
      slot,
      encodeSlot({ task: '/plans/plan-0000000001/task-0000000003', workerId: 'w1', at }, slot),
      'ephemeral',
    );
    expect(await proc.zkPlan.limits(PARENT).list()).toEqual([
      {
        key: 'api',
        limit: 1,
        holders: [{ task: '/plans/plan-0000000001/task-0000000003', workerId: 'w1', at }],
      },
      { key: 'warehouse/eu 1', limit: 3, holders: [] },
    ]);
    expect(
      (await expectRejects(() => proc.zkPlan.limits('plans').list(), InvalidArgumentError))
        .argument,
    ).toBe('parent');
  });

  it('refuses a bad key or limit, naming the argument', async () => {
    const server = new MemoryZooKeeper();
    const proc = memoryProcess(server, 'a');
    processes.push(proc);
    expect(
      (await expectRejects(() => proc.zkPlan.limits(PARENT).set('k', 1.5), InvalidArgumentError))
        .argument,
    ).toBe('limit');
    expect(
      (await expectRejects(() => proc.zkPlan.limits(PARENT).set('', 1), InvalidArgumentError))
        .argument,
    ).toBe('key');
    const plan = await proc.zkPlan.createPlan(PARENT);
    expect(
      (
        await expectRejects(
          () => proc.zkPlan.addTask(plan, call('x'), [], { concurrencyKey: '' }),
          InvalidArgumentError,
        )
      ).argument,
    ).toBe('concurrencyKey');
  });
});
