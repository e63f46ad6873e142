/**
 * Review of control.cancel's read of who holds which task before its control record (0c8a1c2):
 * an owner record the describer refuses must not reach a history record through that read, and a
 * cancel called again after the first one's control record landed (and the worker gave its task
 * back) should still record the task as cancelled while running, as docs/design/plan-control.md says.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { FunctionRegistry } from '../../src/exec/function-registry.js';
import { call } from '../../src/exec/task-spec.js';
import { encodeValue } from '../../src/serialization/codec.js';
import {
  MemoryZooKeeper,
  type OperationScheduler,
  type ScheduledOperation,
} from '../../src/testing/index.js';
import { memoryProcess, type MemoryProcess } from '../support/memory-plan.js';

const PARENT = '/plans';
const WRITES: ReadonlySet<string> = new Set(['create', 'setData', 'delete']);

/** Applies operations in the order sent; the victim dies right after its write of `path` lands. */
class CrashAfterWriteOf implements OperationScheduler {
  victim: { name: string; path: string; crash: () => void } | undefined;

  enqueue(operation: ScheduledOperation): void {
    queueMicrotask(() => {
      operation.apply();
      const victim = this.victim;
      if (
        victim !== undefined &&
        operation.clientName === victim.name &&
        operation.path === victim.path &&
        WRITES.has(operation.op)
      ) {
        this.victim = undefined;
        victim.crash();
      }
    });
  }
}

describe('control.cancel’s read of the owners before its control record', () => {
  const processes: MemoryProcess[] = [];
  afterEach(async () => {
    await Promise.all(processes.splice(0).map(({ zkPlan }) => zkPlan.close()));
  });

  function open(server: MemoryZooKeeper, name: string): MemoryProcess {
    const proc = memoryProcess(
      server,
      name,
      new FunctionRegistry().register('ok', () => 1),
    );
    processes.push(proc);
    return proc;
  }

  it('ignores an owner record whose claimedAt is not a time, as the describer does: the cancel completes', async () => {
    const server = new MemoryZooKeeper();
    const builder = open(server, 'builder');
    const ghost = open(server, 'ghost');
    const plan = await builder.zkPlan.createPlan(PARENT);
    const task = await builder.zkPlan.addTask(plan, call('ok'));
    // Written by another tool: the describer shows no owner for it (plan-describer.ts readLiveTask).
    await ghost.zk.create(
      `${task}/owner`,
      encodeValue(
        { workerId: 'ghost/1', claimedAt: 'x'.repeat(1_000_000) },
        'owner',
        undefined,
        Number.POSITIVE_INFINITY,
      ),
      'ephemeral',
    );

    await builder.zkPlan.control.cancel(plan);

    const view = await builder.zkPlan.plans.describe(plan);
    expect(view.tasks.find((entry) => entry.task === task)).toMatchObject({ state: 'cancelled' });
    expect(view.tasks.find((entry) => entry.task === task)?.startedAt).toBeUndefined();
  });

  it('a cancel that died right after its control record, called again once the worker gave its task back, records the task as cancelled while running', async () => {
    const scheduler = new CrashAfterWriteOf();
    const server = new MemoryZooKeeper({ scheduler });
    const builder = open(server, 'builder');
    const ghost = open(server, 'ghost');
    const plan = await builder.zkPlan.createPlan(PARENT);
    const task = await builder.zkPlan.addTask(plan, call('ok'));
    await builder.zkPlan.markAsReady(plan);
    await ghost.zk.create(
      `${task}/owner`,
      encodeValue({ workerId: 'ghost/1', claimedAt: new Date() }, 'owner'),
      'ephemeral',
    );
    const victim = memoryProcess(server, 'victim', new FunctionRegistry());
    let crashed = false;
    scheduler.victim = {
      name: 'victim',
      path: `${plan}/control`,
      crash: () => {
        crashed = true;
        const session = victim.zk.sessionId;
        victim.zk.crash();
        if (session !== undefined) server.expireSession(session);
      },
    };
    void victim.zkPlan.control.cancel(plan).catch(() => undefined);
    for (let tries = 0; tries < 1_000 && !crashed; tries++)
      await new Promise((resolve) => setTimeout(resolve, 2));
    expect(crashed).toBe(true);
    // What the worker does on seeing the cancel: it gives the task back.
    await ghost.zk.delete(`${task}/owner`);

    await open(server, 'again').zkPlan.control.cancel(plan);

    const view = await builder.zkPlan.plans.describe(plan);
    expect(view.tasks.find((entry) => entry.task === task)).toMatchObject({
      state: 'cancelled',
      was: 'running',
      workerId: 'ghost/1',
    });
  });
});
