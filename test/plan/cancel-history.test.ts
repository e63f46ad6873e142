/**
 * A cancelled plan keeps where each of its tasks stood (issue 21): cancelPlan writes a history
 * record of every task it deletes (cancelled, unstarted, failed; done ones have theirs), all before
 * it deletes any. Over the in-memory ZooKeeper: the records as describePlan shows them, a cancel
 * that dies right before each of its writes and is called again by another process, two processes
 * cancelling at once, and a plan created with { history: false }.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { PermanentError } from '../../src/errors/task-errors.js';
import { FunctionRegistry } from '../../src/exec/function-registry.js';
import { call } from '../../src/exec/task-spec.js';
import type { PlanView } from '../../src/plan/plan-view.js';
import { encodeValue } from '../../src/serialization/codec.js';
import {
  MemoryZooKeeper,
  type OperationScheduler,
  type ScheduledOperation,
} from '../../src/testing/index.js';
import { FAST_BACKOFF, memoryProcess, pause, type MemoryProcess } from '../support/memory-plan.js';

const PARENT = '/plans';
const WRITES: ReadonlySet<string> = new Set(['create', 'setData', 'delete']);

/** Applies operations in the order sent, except that the victim dies right before its `crashAt`-th write. */
class CrashBeforeWrite implements OperationScheduler {
  victim: { name: string; crashAt: number; writes: number; crash: () => void } | undefined;

  enqueue(operation: ScheduledOperation): void {
    queueMicrotask(() => {
      const victim = this.victim;
      if (
        victim !== undefined &&
        operation.live &&
        operation.clientName === victim.name &&
        WRITES.has(operation.op)
      ) {
        victim.writes += 1;
        if (victim.writes === victim.crashAt) {
          victim.crash();
          return;
        }
      }
      operation.apply();
    });
  }
}

const functions = (): FunctionRegistry =>
  new FunctionRegistry()
    .register('ok', (ctx) => ctx.params[0])
    .register('boom', () => {
      throw new PermanentError('the disk is full', { code: 'DISK_FULL' });
    });

interface Fixture {
  readonly plan: string;
  readonly tasks: {
    readonly done: string;
    readonly failed: string;
    readonly blocked: string;
    readonly runnable: string;
    readonly running: string;
    readonly waiting: string;
  };
}

/**
 * A ready plan with a task in every state: done, failed for good, blocked behind it, runnable (no
 * worker runs any more), running (held by a ghost process whose owner node stays) and waiting for it.
 */
async function planInEveryState(builder: MemoryProcess, ghost: MemoryProcess): Promise<Fixture> {
  const plan = await builder.zkPlan.createPlan(PARENT, { maxAttempts: 1 });
  const [done, failed, blocked] = (await builder.zkPlan.addTasks(plan, [
    { task: call('ok', 1), options: { keepResult: true } },
    { task: call('boom') },
    { task: call('ok', 2), args: [1] },
  ])) as [string, string, string];
  await builder.zkPlan.markAsReady(plan);
  const pool = builder.zkPlan.startWorkers(PARENT, {
    count: 1,
    backoff: FAST_BACKOFF,
    retention: false,
  });
  for (let tries = 0; tries < 1_000; tries++) {
    const view = await builder.zkPlan.plans.describe(plan);
    if (view.status.counts.done === 1 && view.status.counts.failed === 1) break;
    await pause(2);
  }
  await pool.stop();
  const runnable = await builder.zkPlan.addTask(plan, call('ok', 3));
  const running = await builder.zkPlan.addTask(plan, call('ok', 4));
  const waiting = await builder.zkPlan.addTask(plan, call('ok', 5), [running]);
  await ghost.zk.create(
    `${running}/owner`,
    encodeValue({ workerId: 'ghost/1', claimedAt: new Date() }, 'owner'),
    'ephemeral',
  );
  return { plan, tasks: { done, failed, blocked, runnable, running, waiting } };
}

/** Each task's state as the view shows it, and where the cancelled and unstarted ones stood. */
function standings(view: PlanView): Record<string, string> {
  return Object.fromEntries(
    view.tasks.map((task) => [
      task.task,
      task.was === undefined ? task.state : `${task.state} (was ${task.was})`,
    ]),
  );
}

function expected({ tasks }: Fixture): Record<string, string> {
  return {
    [tasks.done]: 'done',
    [tasks.failed]: 'failed',
    [tasks.blocked]: 'unstarted (was blocked)',
    [tasks.runnable]: 'cancelled (was runnable)',
    [tasks.running]: 'cancelled (was running)',
    [tasks.waiting]: 'unstarted (was waiting)',
  };
}

describe('cancelPlan keeps where each task stood', () => {
  const processes: MemoryProcess[] = [];
  afterEach(async () => {
    await Promise.all(processes.splice(0).map(({ zkPlan }) => zkPlan.close()));
  });

  function open(server: MemoryZooKeeper, name: string): MemoryProcess {
    const proc = memoryProcess(server, name, functions());
    processes.push(proc);
    return proc;
  }

  it('records every task it deletes: describePlan shows each with its state, call, attempts, worker and times, and the counts agree', async () => {
    const server = new MemoryZooKeeper();
    const fixture = await planInEveryState(open(server, 'builder'), open(server, 'ghost'));
    const asker = open(server, 'asker');
    const cancelledAt = Date.now();
    await asker.zkPlan.control.cancel(fixture.plan, { reason: 'test' });

    expect(server.children(fixture.plan).filter((name) => name.startsWith('task-'))).toEqual([]);
    const view = await asker.zkPlan.plans.describe(fixture.plan);
    expect(standings(view)).toEqual(expected(fixture));
    const byTask = new Map(view.tasks.map((task) => [task.task, task]));
    expect(byTask.get(fixture.tasks.done)).toMatchObject({
      fn: 'ok',
      params: [1],
      keepResult: true,
      workerId: expect.any(String),
      durationMs: expect.any(Number),
    });
    expect(byTask.get(fixture.tasks.failed)).toMatchObject({
      fn: 'boom',
      failedTries: 1,
      failure: {
        code: 'DISK_FULL',
        message: expect.stringContaining('the disk is full'),
        attempts: 1,
      },
      finishedAt: expect.any(Date),
    });
    expect(byTask.get(fixture.tasks.running)).toMatchObject({
      fn: 'ok',
      params: [4],
      workerId: 'ghost/1',
      startedAt: expect.any(Date),
    });
    expect(byTask.get(fixture.tasks.running)?.cancelledAt?.getTime()).toBeGreaterThanOrEqual(
      cancelledAt,
    );
    // Its inputs are still known: from its producer's record.
    expect(byTask.get(fixture.tasks.waiting)?.inputs).toEqual([fixture.tasks.running]);
    expect(byTask.get(fixture.tasks.blocked)?.inputs).toEqual([fixture.tasks.failed]);
    expect(view.status).toMatchObject({
      state: 'cancelled',
      counts: { total: 6, done: 1, remaining: 5, failed: 1, cancelled: 2, unstarted: 2 },
    });
    expect(view.status.failed.map(({ task }) => task)).toEqual([fixture.tasks.failed]);
    // planStatus and listPlans count as describePlan does.
    expect((await asker.zkPlan.plans.status(fixture.plan)).counts).toEqual(view.status.counts);
    expect((await asker.zkPlan.plans.list(PARENT))[0]?.status.counts).toEqual(view.status.counts);
  });

  it('a cancel that dies right before any one of its writes, called again by another process, ends with the same records and no task left', async () => {
    let finished = false;
    let crashes = 0;
    for (let crashAt = 1; !finished; crashAt++) {
      expect(crashAt, 'the cancel never finished').toBeLessThan(100);
      const scheduler = new CrashBeforeWrite();
      const server = new MemoryZooKeeper({ scheduler });
      const fixture = await planInEveryState(open(server, 'builder'), open(server, 'ghost'));
      const victim = open(server, 'victim');
      let crashed = false;
      scheduler.victim = {
        name: 'victim',
        crashAt,
        writes: 0,
        crash: () => {
          crashed = true;
          const session = victim.zk.sessionId;
          victim.zk.crash();
          if (session !== undefined) server.expireSession(session);
        },
      };
      const cancelling = victim.zkPlan.control.cancel(fixture.plan);
      await Promise.race([cancelling, until(() => crashed)]);
      if (!crashed) {
        finished = true;
        await cancelling;
      } else crashes += 1;
      processes.splice(processes.indexOf(victim), 1); // its session is gone: closing it would wait for nothing

      const again = open(server, `again-${crashAt}`);
      if (crashed) await again.zkPlan.control.cancel(fixture.plan);
      expect(
        server.children(fixture.plan).filter((name) => name.startsWith('task-')),
        `crash before write ${crashAt}`,
      ).toEqual([]);
      expect(server.children(`${fixture.plan}/history`)).toHaveLength(6);
      expect(
        standings(await again.zkPlan.plans.describe(fixture.plan)),
        `crash before write ${crashAt}`,
      ).toEqual(expected(fixture));
      await Promise.all(processes.splice(0).map(({ zkPlan }) => zkPlan.close()));
    }
    // Its writes: the control record, the touch, 4 records, then the deletes (ready, and each task's nodes).
    expect(crashes).toBeGreaterThan(12);
  });

  it('two processes cancelling at once write one record per task', async () => {
    const server = new MemoryZooKeeper();
    const fixture = await planInEveryState(open(server, 'builder'), open(server, 'ghost'));
    const [first, second] = [open(server, 'first'), open(server, 'second')];
    await Promise.all([
      first.zkPlan.control.cancel(fixture.plan),
      second.zkPlan.control.cancel(fixture.plan),
    ]);
    expect(server.children(`${fixture.plan}/history`)).toHaveLength(6);
    expect(standings(await first.zkPlan.plans.describe(fixture.plan))).toEqual(expected(fixture));
  });

  it('a plan created with { history: false } keeps no record: its tasks are deleted and it shows none', async () => {
    const server = new MemoryZooKeeper();
    const proc = open(server, 'p');
    const plan = await proc.zkPlan.createPlan(PARENT, { history: false });
    await proc.zkPlan.addTask(plan, call('ok', 1));
    await proc.zkPlan.markAsReady(plan);
    await proc.zkPlan.control.cancel(plan);
    expect(
      server.children(plan).filter((name) => name.startsWith('task-') || name === 'history'),
    ).toEqual([]);
    const view = await proc.zkPlan.plans.describe(plan);
    expect(view).toMatchObject({
      historyKept: false,
      tasks: [],
      status: { state: 'cancelled', counts: { total: 0 } },
    });
  });
});

async function until(check: () => boolean): Promise<void> {
  while (!check()) await pause(1);
}
