/**
 * Pause, resume and cancel over the in-memory ZooKeeper, with real worker pools in two processes:
 * what starts after a pause, what a cancel leaves, and a worker that never heard of a pause.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  PlanCancelledError,
  PlanFinishedError,
  PlanPausedError,
} from '../../src/errors/plan-errors.js';
import { WaitTimeoutError } from '../../src/errors/usage-errors.js';
import { FunctionRegistry } from '../../src/exec/function-registry.js';
import type { TaskContext } from '../../src/exec/task-context.js';
import { call } from '../../src/exec/task-spec.js';
import { encodeControlRecord } from '../../src/control/control-record.js';
import { MemoryZooKeeper } from '../../src/testing/index.js';
import { FAST_BACKOFF, memoryProcess, pause, type MemoryProcess } from '../support/memory-plan.js';
import { expectRejects } from '../support/expect-error.js';

const PARENT = '/plans';

interface Start {
  readonly label: string;
  readonly at: number;
}

/** `work(label, ms)`: waits ms (cut short by its signal) and returns label; every start and abort is recorded. */
function workRegistry(
  starts: Start[],
  aborts: { label: string; reason: unknown }[],
): FunctionRegistry {
  return new FunctionRegistry().register(
    'work',
    async (ctx: TaskContext<unknown[]>, ...inputs: unknown[]) => {
      const label = String(ctx.params[0]);
      starts.push({ label, at: performance.now() });
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(resolve, Number(ctx.params[1]));
        ctx.signal.addEventListener(
          'abort',
          () => {
            clearTimeout(timer);
            aborts.push({ label, reason: ctx.signal.reason });
            reject(ctx.signal.reason as Error);
          },
          { once: true },
        );
      });
      return [label, ...inputs].join('+');
    },
  );
}

describe('pausePlan, resumePlan, cancelPlan', () => {
  const processes: MemoryProcess[] = [];
  afterEach(async () => {
    await Promise.all(processes.splice(0).map(({ zkPlan }) => zkPlan.close()));
  });

  function cluster(
    server: MemoryZooKeeper,
    starts: Start[],
    aborts: { label: string; reason: unknown }[],
    count = 2,
  ): MemoryProcess[] {
    const started = ['a', 'b'].map((name) =>
      memoryProcess(server, name, workRegistry(starts, aborts)),
    );
    processes.push(...started);
    for (const { zkPlan } of started)
      zkPlan.startWorkers(PARENT, {
        count,
        backoff: FAST_BACKOFF,
        retention: false,
        drainTimeoutMs: 50,
      });
    return started;
  }

  it('after a pause is acknowledged only the tasks it reported as held start; the plan waits, then resume completes it with the right results', async () => {
    const server = new MemoryZooKeeper();
    const starts: Start[] = [];
    const [a] = cluster(server, starts, []);
    const { zkPlan } = a as MemoryProcess;
    const plan = await zkPlan.createPlan(PARENT);
    const tasks = await zkPlan.addTasks(
      plan,
      Array.from({ length: 30 }, (_, index) => ({ task: call('work', `t${index}`, 15) })),
    );
    const total = await zkPlan.addTask(plan, call('work', 'total', 1), tasks.slice(0, 3), {
      keepResult: true,
    });
    await zkPlan.markAsReady(plan);
    while (starts.length < 6) await pause(2);

    const outcome = await zkPlan.control.pause(plan);
    const acknowledgedAt = performance.now();
    await pause(150); // many task lengths: a worker that ignored the pause would have started several
    const afterPause = starts
      .filter((start) => start.at > acknowledgedAt)
      .map((start) => start.label);
    const held = new Set(
      outcome.running.map((task) => tasks.indexOf(task)).map((index) => `t${index}`),
    );
    expect(afterPause.filter((label) => !held.has(label))).toEqual([]);
    expect((await zkPlan.plans.status(plan)).state).toBe('paused');
    expect((await zkPlan.plans.status(plan)).control).toMatchObject({
      state: 'paused',
      abortRunning: false,
    });
    await expectRejects(() => zkPlan.waitForCompletion(plan, { timeoutMs: 50 }), WaitTimeoutError);
    expect(await zkPlan.control.pause(plan)).toMatchObject({ plan }); // repeating it is harmless

    await zkPlan.control.resume(plan);
    await zkPlan.waitForCompletion(plan, { timeoutMs: 10_000 });
    expect(await zkPlan.getResult(total)).toBe('total+t0+t1+t2');
    expect(new Set(starts.map((start) => start.label)).size).toBe(31);
  });

  it('a pause with abortRunning aborts running tasks with PlanPausedError, uncharged, and they run again after resume', async () => {
    const server = new MemoryZooKeeper();
    const starts: Start[] = [];
    const aborts: { label: string; reason: unknown }[] = [];
    const [a] = cluster(server, starts, aborts, 1);
    const { zkPlan } = a as MemoryProcess;
    const plan = await zkPlan.createPlan(PARENT, { maxAttempts: 1 }); // a charged failure would fail it for good
    await zkPlan.addTasks(plan, [
      { task: call('work', 'long', 60_000) },
      { task: call('work', 'long2', 60_000) },
    ]);
    await zkPlan.markAsReady(plan);
    while (starts.length < 2) await pause(2);
    await zkPlan.control.pause(plan, { abortRunning: true });
    while (aborts.length < 2) await pause(2);
    expect(aborts.every(({ reason }) => reason instanceof PlanPausedError)).toBe(true);
    const status = await zkPlan.plans.status(plan);
    expect(status).toMatchObject({ state: 'paused', failed: [], retrying: [] });
    await pause(50);
    expect(starts).toHaveLength(2);
    await zkPlan.control.resume(plan);
    while (starts.length < 4) await pause(2);
    expect(starts.map((start) => start.label).sort()).toEqual(['long', 'long', 'long2', 'long2']);
  });

  it('cancel aborts running tasks, deletes the rest, and the plan ends cancelled: waitForCompletion rejects with PLAN_CANCELLED and its reason', async () => {
    const server = new MemoryZooKeeper();
    const starts: Start[] = [];
    const aborts: { label: string; reason: unknown }[] = [];
    const [a] = cluster(server, starts, aborts);
    const { zkPlan } = a as MemoryProcess;
    const plan = await zkPlan.createPlan(PARENT);
    const tasks = await zkPlan.addTasks(
      plan,
      Array.from({ length: 10 }, (_, index) => ({ task: call('work', `t${index}`, 60_000) })),
    );
    await zkPlan.addTask(plan, call('work', 'after', 1), tasks.slice(0, 2));
    await zkPlan.markAsReady(plan);
    const waiting = zkPlan.waitForCompletion(plan, { timeoutMs: 10_000 });
    while (starts.length < 4) await pause(2);

    await zkPlan.control.cancel(plan, { reason: 'started by mistake' });
    const error = await expectRejects(() => waiting, PlanCancelledError);
    expect(error).toMatchObject({ code: 'PLAN_CANCELLED', reason: 'started by mistake', plan });
    while (aborts.length < 4) await pause(2);
    expect(aborts.every(({ reason }) => reason instanceof PlanCancelledError)).toBe(true);
    expect(server.children(plan).filter((name) => name.startsWith('task-'))).toEqual([]);
    const status = await zkPlan.plans.status(plan);
    expect(status).toMatchObject({
      state: 'cancelled',
      control: { state: 'cancelled', reason: 'started by mistake' },
    });
    await zkPlan.control.cancel(plan, { reason: 'again' }); // repeating it is harmless and keeps the first reason
    expect((await zkPlan.plans.status(plan)).control?.reason).toBe('started by mistake');
    await expectRejects(() => zkPlan.control.resume(plan), PlanCancelledError);
    await expectRejects(() => zkPlan.control.pause(plan), PlanCancelledError);
    await expectRejects(() => zkPlan.control.retryFailed(plan), PlanCancelledError);
    await expectRejects(
      () => zkPlan.waitForCompletion(plan, { timeoutMs: 1_000 }),
      PlanCancelledError,
    );
    expect(starts.map((start) => start.label)).not.toContain('after');
  });

  it('a completed plan and a failed plan refuse pause and cancel with PLAN_FINISHED and keep their state; a plan still being built does not', async () => {
    const server = new MemoryZooKeeper();
    const [a] = cluster(server, [], []);
    const { zkPlan } = a as MemoryProcess;
    zkPlan.functions.register('boom', () => {
      throw new Error('no luck');
    });
    const done = await zkPlan.createPlan(PARENT, { history: true });
    await zkPlan.addTasks(done, [{ task: call('work', 'only', 1) }]);
    await zkPlan.markAsReady(done);
    await zkPlan.waitForCompletion(done, { timeoutMs: 10_000 });
    const failed = await zkPlan.createPlan(PARENT);
    await zkPlan.addTasks(failed, [{ task: call('boom'), options: { maxAttempts: 1 } }]);
    await zkPlan.markAsReady(failed);
    await expect(zkPlan.waitForCompletion(failed, { timeoutMs: 10_000 })).rejects.toMatchObject({
      code: 'PLAN_FAILED',
    });

    for (const [plan, state] of [
      [done, 'completed'],
      [failed, 'failed'],
    ] as const) {
      const cancelled = await expectRejects(
        () => zkPlan.control.cancel(plan, { reason: 'too late' }),
        PlanFinishedError,
      );
      expect(cancelled).toMatchObject({
        code: 'PLAN_FINISHED',
        plan,
        state,
        action: 'cancel',
        path: plan,
      });
      expect(cancelled.message).toContain(`has already ${state}`);
      expect(
        await expectRejects(() => zkPlan.control.pause(plan), PlanFinishedError),
      ).toMatchObject({ state, action: 'pause' });
      const status = await zkPlan.plans.status(plan);
      expect(status.state).toBe(state);
      expect(status.control).toBeUndefined();
    }
    // No task yet and not marked ready: being built, not finished.
    const building = await zkPlan.createPlan(PARENT);
    await zkPlan.control.pause(building);
    await zkPlan.control.cancel(building, { reason: 'builder gave up' });
    expect((await zkPlan.plans.status(building)).state).toBe('cancelled');
  });

  it('describePlan of a plan with history says paused and cancelled too, with the record, its priority and each task’s own', async () => {
    const server = new MemoryZooKeeper();
    const proc = memoryProcess(server, 'viewer');
    processes.push(proc);
    const { zkPlan } = proc;
    const plan = await zkPlan.createPlan(PARENT, { history: true, priority: 4 });
    await zkPlan.addTasks(plan, [
      { task: call('work', 'a', 1) },
      { task: call('work', 'b', 1), options: { priority: 9, concurrencyKey: 'api' } },
    ]);
    await zkPlan.markAsReady(plan);
    await zkPlan.control.pause(plan);
    const paused = await zkPlan.plans.describe(plan);
    expect(paused.status).toMatchObject({
      state: 'paused',
      priority: 4,
      control: { state: 'paused' },
    });
    expect(
      paused.tasks.map(({ priority, concurrencyKey }) => ({ priority, concurrencyKey })),
    ).toEqual([
      { priority: undefined, concurrencyKey: undefined },
      { priority: 9, concurrencyKey: 'api' },
    ]);
    await zkPlan.control.cancel(plan, { reason: 'no longer needed' });
    expect((await zkPlan.plans.describe(plan)).status).toMatchObject({
      state: 'cancelled',
      control: { reason: 'no longer needed' },
    });
  });

  it('pausePlan reports every held task, one missing from the runnable index too (a retry waiting out its delay, a scan claims it)', async () => {
    const server = new MemoryZooKeeper();
    const proc = memoryProcess(server, 'one', workRegistry([], []));
    processes.push(proc);
    const plan = await proc.zkPlan.createPlan(PARENT);
    const [indexed, unindexed, idle] = (await proc.zkPlan.addTasks(plan, [
      { task: call('work', 'a', 1) },
      { task: call('work', 'b', 1) },
      { task: call('work', 'c', 1) },
    ])) as [string, string, string];
    await proc.zkPlan.markAsReady(plan);
    // Claimed by some worker: an owner node each; the second is not in the index.
    for (const task of [indexed, unindexed])
      await proc.zk.create(`${task}/owner`, null, 'ephemeral');
    await proc.zk.delete(`${plan}/runnable/${unindexed.slice(unindexed.lastIndexOf('/') + 1)}`);
    const { running } = await proc.zkPlan.control.pause(plan);
    expect(running).toEqual([indexed, unindexed]);
    expect(running).not.toContain(idle);
  });

  it('a pause cut short between its record and its touch holds within 10 s: a watch vouches for a plan that long at most', async () => {
    const server = new MemoryZooKeeper();
    const starts: Start[] = [];
    const proc = memoryProcess(server, 'one', workRegistry(starts, []));
    processes.push(proc);
    const plan = await proc.zkPlan.createPlan(PARENT);
    await proc.zkPlan.addTask(plan, call('work', 'a', 1));
    await proc.zkPlan.markAsReady(plan);
    proc.zkPlan.startWorkers(PARENT, { count: 1, backoff: FAST_BACKOFF, retention: false });
    while (starts.length < 1) await pause(2);
    const realNow = performance.now();
    vi.useFakeTimers({ toFake: ['performance'] }); // only the clock the vouch is measured with (its fake starts anew)
    try {
      // The writer of a pause died after the record, before the touch: no watch fires.
      const controlPath = `${plan}/control`;
      await proc.zk.create(
        controlPath,
        encodeControlRecord({ state: 'paused', at: new Date(), abortRunning: false }, controlPath),
      );
      await proc.zkPlan.addTask(plan, call('work', 'b', 1));
      while (starts.length < 2) await pause(2); // within the vouch, the view still says the plan runs
      vi.advanceTimersByTime(realNow + 10_001); // past every vouch given before, whatever the fake clock started at
      await proc.zkPlan.addTask(plan, call('work', 'c', 1));
      await pause(200);
      expect(starts.map(({ label }) => label)).toEqual(['a', 'b']); // the vouch ran out: the claim read the control node
    } finally {
      vi.useRealTimers();
    }
    await proc.zkPlan.control.resume(plan);
    await proc.zkPlan.waitForCompletion(plan, { timeoutMs: 10_000 });
    expect(starts.map(({ label }) => label)).toEqual(['a', 'b', 'c']);
  });

  it('a worker that never heard of a pause (no watch fired) still starts nothing: it reads the control node after each claim', async () => {
    const server = new MemoryZooKeeper();
    const starts: Start[] = [];
    const writer = memoryProcess(server, 'writer', workRegistry(starts, []));
    processes.push(writer);
    const plan = await writer.zkPlan.createPlan(PARENT);
    await writer.zkPlan.addTasks(
      plan,
      Array.from({ length: 5 }, (_, index) => ({ task: call('work', `t${index}`, 1) })),
    );
    await writer.zkPlan.markAsReady(plan);
    // The control node only, without the touch of the plan node that tells the workers' watches.
    const controlPath = `${plan}/control`;
    await writer.zk.create(
      controlPath,
      encodeControlRecord({ state: 'paused', at: new Date(), abortRunning: false }, controlPath),
    );
    const worker = memoryProcess(server, 'worker', workRegistry(starts, []));
    processes.push(worker);
    worker.zkPlan.startWorkers(PARENT, { count: 2, backoff: FAST_BACKOFF, retention: false });
    await pause(100);
    expect(starts).toEqual([]);
    await writer.zkPlan.control.resume(plan);
    await writer.zkPlan.waitForCompletion(plan, { timeoutMs: 10_000 });
    expect(starts).toHaveLength(5);
  });
});
