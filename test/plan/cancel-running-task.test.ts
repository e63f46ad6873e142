/**
 * A running task of a cancelled plan is recorded as cancelled while running, on its worker, whatever
 * the order of the cancel's writes and the worker's give-back: the worker that sees the cancel
 * writes that record itself before it gives the task back (src/worker/record-cancelled-run.ts), and
 * a task's first record wins. Over the in-memory ZooKeeper, with a real worker: the worker gives its
 * task back between the cancel's control record and its reads; the cancel dies right after its
 * control record and is called again once the task was given back; and an owner record that another
 * tool wrote, with no real time, does not reach the history.
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
import { memoryProcess, pause, type MemoryProcess } from '../support/memory-plan.js';

const PARENT = '/plans';
const WRITES: ReadonlySet<string> = new Set(['create', 'setData', 'delete']);

/**
 * Applies operations in the order sent, except around the canceller's touch of the plan node (the
 * write after its control record that tells every worker): `after: 'crash'` kills the canceller
 * right after it lands; `after: 'hold'` holds the canceller's next operations until `release` (the
 * worker giving its task back) is done.
 */
class AroundControlRecord implements OperationScheduler {
  canceller:
    | { name: string; touch: string; after: 'crash'; crash: () => void }
    | { name: string; touch: string; after: 'hold'; release: () => Promise<unknown> }
    | undefined;
  /** The canceller's operations sent while it is held, and its name. */
  private held: { name: string; operations: ScheduledOperation[] } | undefined;

  enqueue(operation: ScheduledOperation): void {
    queueMicrotask(() => {
      const canceller = this.canceller;
      if (this.held !== undefined && operation.clientName === this.held.name) {
        this.held.operations.push(operation);
        return;
      }
      operation.apply();
      if (
        canceller === undefined ||
        operation.clientName !== canceller.name ||
        operation.path !== canceller.touch ||
        operation.op !== 'setData'
      )
        return;
      this.canceller = undefined;
      if (canceller.after === 'crash') {
        canceller.crash();
        return;
      }
      const held = { name: canceller.name, operations: [] as ScheduledOperation[] };
      this.held = held;
      void canceller.release().then(() => {
        this.held = undefined;
        for (const waiting of held.operations) waiting.apply();
      });
    });
  }
}

/** A task that runs until its signal is aborted (a cancel). */
const functions = (): FunctionRegistry =>
  new FunctionRegistry()
    .register('ok', () => 1)
    .register(
      'hold',
      (ctx) =>
        new Promise((_, reject) => {
          ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason as Error));
        }),
    );

async function until(check: () => boolean, what: string): Promise<void> {
  for (let tries = 0; tries < 2_000; tries++) {
    if (check()) return;
    await pause(2);
  }
  throw new Error(`timed out waiting until ${what}`);
}

describe('a running task of a cancelled plan', () => {
  const processes: MemoryProcess[] = [];
  afterEach(async () => {
    await Promise.all(processes.splice(0).map(({ zkPlan }) => zkPlan.close()));
  });

  function open(server: MemoryZooKeeper, name: string): MemoryProcess {
    const proc = memoryProcess(server, name, functions());
    processes.push(proc);
    return proc;
  }

  /** A plan whose one task a worker of `worker` runs (and holds until the plan is cancelled). */
  async function runningTask(
    server: MemoryZooKeeper,
    worker: MemoryProcess,
  ): Promise<{ plan: string; task: string }> {
    const plan = await worker.zkPlan.createPlan(PARENT);
    const task = await worker.zkPlan.addTask(plan, call('hold'));
    await worker.zkPlan.markAsReady(plan);
    worker.zkPlan.startWorkers(PARENT, { count: 1, workerId: 'w-1', retention: false });
    await until(() => server.children(task).includes('owner'), 'the worker holds the task');
    return { plan, task };
  }

  it("is recorded as cancelled while running, with its worker, when the worker gives it back between the cancel's control record and its reads", async () => {
    const scheduler = new AroundControlRecord();
    const server = new MemoryZooKeeper({ scheduler });
    const { plan, task } = await runningTask(server, open(server, 'worker'));
    let givenBack = false;
    scheduler.canceller = {
      name: 'asker',
      touch: plan,
      after: 'hold',
      release: async () => {
        await until(() => !server.children(task).includes('owner'), 'the worker gives it back');
        givenBack = true;
      },
    };
    const asker = open(server, 'asker');
    await asker.zkPlan.control.cancel(plan);

    expect(givenBack).toBe(true);
    const view = await asker.zkPlan.plans.describe(plan);
    expect(view.tasks.find((entry) => entry.task === task)).toMatchObject({
      state: 'cancelled',
      was: 'running',
      workerId: expect.stringContaining('w-1'),
      startedAt: expect.any(Date),
    });
  });

  it('is recorded as cancelled while running when the cancel died right after its control record and is called again once the task was given back', async () => {
    const scheduler = new AroundControlRecord();
    const server = new MemoryZooKeeper({ scheduler });
    const { plan, task } = await runningTask(server, open(server, 'worker'));
    const victim = memoryProcess(server, 'victim', functions());
    let crashed = false;
    scheduler.canceller = {
      name: 'victim',
      touch: plan,
      after: 'crash',
      crash: () => {
        crashed = true;
        const session = victim.zk.sessionId;
        victim.zk.crash();
        if (session !== undefined) server.expireSession(session);
      },
    };
    void victim.zkPlan.control.cancel(plan).catch(() => undefined);
    await until(() => crashed, 'the first cancel died');
    await until(() => !server.children(task).includes('owner'), 'the worker gives it back');

    await open(server, 'again').zkPlan.control.cancel(plan);

    const view = await open(server, 'reader').zkPlan.plans.describe(plan);
    expect(view.tasks.find((entry) => entry.task === task)).toMatchObject({
      state: 'cancelled',
      was: 'running',
      workerId: expect.stringContaining('w-1'),
    });
  });

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
});
