/**
 * The ZkPlan API end to end over the in-memory ZooKeeper: plans with retries, failures for good,
 * failFast, retryFailed, deletePlan, waitForCompletion, describePlan and listPlans, run by real
 * worker pools, with no server.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  ArgTaskNotFoundError,
  PlanAbortedError,
  PlanDeletedError,
  PlanFailedError,
  PlanNotFoundError,
  ResultNotFoundError,
} from '../src/errors/plan-errors.js';
import { OwnershipLostError, PermanentError } from '../src/errors/task-errors.js';
import {
  IllegalStateError,
  InvalidArgumentError,
  WaitTimeoutError,
} from '../src/errors/usage-errors.js';
import { FunctionRegistry } from '../src/exec/function-registry.js';
import type { TaskContext } from '../src/exec/task-context.js';
import { call } from '../src/exec/task-spec.js';
import { MemoryZooKeeper } from '../src/testing/index.js';
import type { ZkPlanEvents } from '../src/worker/worker-events.js';
import { FAST_BACKOFF, memoryProcess, pause, type MemoryProcess } from './support/memory-plan.js';
import { expectRejects } from './support/expect-error.js';

const PARENT = '/plans';

type Ctx = TaskContext<unknown[]>;

/** Functions whose calls are counted by task label (params[0]). */
function registry(
  calls: Map<string, number>,
  extra: (registry: FunctionRegistry) => FunctionRegistry = (r) => r,
): FunctionRegistry {
  const count = (ctx: Ctx): number => {
    const label = String(ctx.params[0]);
    const n = (calls.get(label) ?? 0) + 1;
    calls.set(label, n);
    return n;
  };
  return extra(
    new FunctionRegistry()
      .register('value', (ctx: Ctx) => {
        count(ctx);
        return ctx.params[1];
      })
      .register('sum', (ctx: Ctx, ...inputs: number[]) => {
        count(ctx);
        return inputs.reduce((a, b) => a + b, 0);
      })
      // fails (plain Error) on its first params[1] calls
      .register('flaky', (ctx: Ctx, ...inputs: number[]) => {
        if (count(ctx) <= Number(ctx.params[1]))
          throw new Error(`${String(ctx.params[0])}: not yet`);
        return inputs.reduce((a, b) => a + b, 100);
      })
      .register('permanent', (ctx: Ctx) => {
        count(ctx);
        throw new PermanentError('no such customer', { code: 'NO_SUCH_CUSTOMER' });
      })
      // resolves when its signal aborts, with the reason recorded
      .register('waitForAbort', async (ctx: Ctx) => {
        count(ctx);
        aborts.push(
          await new Promise<unknown>((resolve) =>
            ctx.signal.addEventListener('abort', () => resolve(ctx.signal.reason), { once: true }),
          ),
        );
        throw ctx.signal.reason;
      }),
  );
}

const aborts: unknown[] = [];
const opened: MemoryProcess[] = [];

function open(server: MemoryZooKeeper, name: string, functions: FunctionRegistry): MemoryProcess {
  const proc = memoryProcess(server, name, functions);
  opened.push(proc);
  return proc;
}

/** Collects a ZkPlan's events of one kind. */
function record<K extends keyof ZkPlanEvents>(proc: MemoryProcess, name: K): ZkPlanEvents[K][0][] {
  const seen: ZkPlanEvents[K][0][] = [];
  (proc.zkPlan.on as (name: K, listener: (event: ZkPlanEvents[K][0]) => void) => unknown)(
    name,
    (event) => seen.push(event),
  );
  return seen;
}

afterEach(async () => {
  aborts.length = 0;
  await Promise.all(opened.splice(0).map((proc) => proc.zkPlan.close()));
});

describe('ZkPlan over the in-memory ZooKeeper', () => {
  it('runs a diamond plan once per task and hands each result on in argument order', async () => {
    const calls = new Map<string, number>();
    const proc = open(new MemoryZooKeeper(), 'p', registry(calls));
    const plan = await proc.zkPlan.createPlan(PARENT);
    const a = await proc.zkPlan.addTask(plan, call('value', 'a', 1));
    const b = await proc.zkPlan.addTask(plan, call('sum', 'b'), [a, a], { keepResult: true });
    const c = await proc.zkPlan.addTask(plan, call('value', 'c', 10));
    const d = await proc.zkPlan.addTask(plan, call('sum', 'd'), [b, c, a], { keepResult: true });
    expect(await proc.zkPlan.planCompleted(plan)).toBe(false);
    expect((await proc.zkPlan.plans.status(plan)).state).toBe('building');
    await proc.zkPlan.markAsReady(plan);
    const completed = record(proc, 'task:completed');
    const pool = proc.zkPlan.startWorkers(PARENT, { count: 3, backoff: FAST_BACKOFF });
    await proc.zkPlan.waitForCompletion(plan, { timeoutMs: 5_000 });
    await pool.stop();
    expect(pool.state).toBe('stopped');
    expect(await proc.zkPlan.getResult(b)).toBe(2);
    expect(await proc.zkPlan.getResult(d)).toBe(13);
    expect(Object.fromEntries(calls)).toEqual({ a: 1, b: 1, c: 1, d: 1 });
    expect(completed.map(({ task }) => task).sort()).toEqual([a, b, c, d].sort());
    expect(await proc.zkPlan.planCompleted(plan)).toBe(true);
    expect((await proc.zkPlan.plans.status(plan)).state).toBe('completed');
    await expectRejects(() => proc.zkPlan.getResult(a), ResultNotFoundError); // not kept
    expect(proc.zkPlan.footprint()).toMatchObject({
      held: 0,
      runningStops: 0,
      poolSignalListeners: 0,
    });
  });

  it('runs a plan with a single worker loop until its signal aborts', async () => {
    const calls = new Map<string, number>();
    const proc = open(new MemoryZooKeeper(), 'p', registry(calls));
    const plan = await proc.zkPlan.createPlan(PARENT);
    const a = await proc.zkPlan.addTask(plan, call('value', 'a', 5), [], { keepResult: true });
    await proc.zkPlan.markAsReady(plan);
    const stop = new AbortController();
    const loop = proc.zkPlan.worker(PARENT, { backoff: FAST_BACKOFF }, stop.signal);
    await proc.zkPlan.waitForCompletion(plan, { timeoutMs: 5_000 });
    stop.abort();
    await loop;
    expect(await proc.zkPlan.getResult(a)).toBe(5);
    expect(() => proc.zkPlan.worker(PARENT, {}, 'no signal' as unknown as AbortSignal)).toThrow(
      InvalidArgumentError,
    );
  });

  it('retries a failing task after its delay, counting each failure, until it succeeds', async () => {
    const calls = new Map<string, number>();
    const proc = open(new MemoryZooKeeper(), 'p', registry(calls));
    const plan = await proc.zkPlan.createPlan(PARENT, {
      maxAttempts: 3,
      initialDelayMs: 0,
      history: true,
    });
    const flaky = await proc.zkPlan.addTask(plan, call('flaky', 'f', 2), [], { keepResult: true });
    await proc.zkPlan.markAsReady(plan);
    const failures = record(proc, 'task:failed');
    const pool = proc.zkPlan.startWorkers(PARENT, { count: 2, backoff: FAST_BACKOFF });
    await proc.zkPlan.waitForCompletion(plan, { timeoutMs: 5_000 });
    await pool.stop();
    expect(await proc.zkPlan.getResult(flaky)).toBe(100);
    expect(calls.get('f')).toBe(3);
    expect(failures.map(({ charged, final, attempts }) => ({ charged, final, attempts }))).toEqual([
      { charged: true, final: false, attempts: 1 },
      { charged: true, final: false, attempts: 2 },
    ]);
    // The history keeps the finished task with the failed tries before its success.
    const view = await proc.zkPlan.plans.describe(plan);
    expect(view.historyKept).toBe(true);
    expect(view.tasks).toEqual([
      expect.objectContaining({
        task: flaky,
        state: 'done',
        fn: 'flaky',
        params: ['f', 2],
        failedTries: 2,
        keepResult: true,
      }),
    ]);
    expect(view.status.state).toBe('completed');
    expect(view.done).toBe(1);
  });

  it('fails a task for good when its tries are used up: the plan fails, its dependents are blocked, and retryFailed runs it again', async () => {
    const calls = new Map<string, number>();
    const proc = open(new MemoryZooKeeper(), 'p', registry(calls));
    const plan = await proc.zkPlan.createPlan(PARENT, { maxAttempts: 2, initialDelayMs: 0 });
    const flaky = await proc.zkPlan.addTask(plan, call('flaky', 'f', 2), [], { keepResult: true });
    const dependent = await proc.zkPlan.addTask(plan, call('sum', 'g'), [flaky], {
      keepResult: true,
    });
    const other = await proc.zkPlan.addTask(plan, call('value', 'o', 7), [], { keepResult: true });
    await proc.zkPlan.markAsReady(plan);
    const pool = proc.zkPlan.startWorkers(PARENT, { count: 2, backoff: FAST_BACKOFF });
    const error = await expectRejects(
      () => proc.zkPlan.waitForCompletion(plan, { timeoutMs: 5_000 }),
      PlanFailedError,
    );
    expect(error.failedTasks.map(({ task }) => task)).toEqual([flaky]);
    expect(error.blockedTasks).toEqual([dependent]);
    expect(await proc.zkPlan.getResult(other)).toBe(7); // continue: the other branch ran to the end
    const status = await proc.zkPlan.plans.status(plan);
    expect(status).toMatchObject({
      state: 'failed',
      failurePolicy: 'continue',
      blocked: [{ task: dependent, reason: `its input comes from failed task ${flaky}` }],
    });
    // Failed for good: its last try is final, whatever its error said of itself.
    expect(status.failed[0]?.failure).toMatchObject({
      attempts: 2,
      retryable: false,
      message: expect.stringContaining('f: not yet'),
    });
    const view = await proc.zkPlan.plans.describe(plan);
    expect(view.tasks.map(({ task, state }) => [task, state])).toEqual([
      [flaky, 'failed'],
      [dependent, 'blocked'],
      [other, 'done'], // from the plan's history, kept by default
    ]);
    // Its retry policy's tries in all: 2 of 2 used, so it ran out of tries (the web view's panel says so).
    expect(view.tasks[0]).toMatchObject({
      failedTries: 2,
      maxAttempts: 2,
      failure: { attempts: 2 },
    });
    expect(view.tasks[2]?.maxAttempts).toBeUndefined(); // no failed try: no policy read for it
    expect(view.tasks[1]).toMatchObject({
      inputs: [flaky],
      pendingInputs: 1,
      blockedReason: expect.stringContaining(flaky),
    });
    const [summary] = await proc.zkPlan.plans.list(PARENT);
    expect(summary).toMatchObject({ plan, status: { state: 'failed' } });
    // Its times: the plan node's creation, and the latest end among its tasks (the failure's, or o's).
    const ends = view.tasks.flatMap(({ finishedAt }) => (finishedAt ? [finishedAt.getTime()] : []));
    expect(summary?.finishedAt?.getTime()).toBe(Math.max(...ends));
    expect(summary?.createdAt?.getTime()).toBeLessThanOrEqual(summary?.finishedAt?.getTime() ?? 0);
    expect(view.createdAt).toEqual(summary?.createdAt);

    expect(await proc.zkPlan.control.retryFailed(plan)).toEqual([flaky]);
    await proc.zkPlan.waitForCompletion(plan, { timeoutMs: 5_000 });
    await pool.stop();
    const [completed] = await proc.zkPlan.plans.list(PARENT);
    expect(completed?.finishedAt?.getTime()).toBeGreaterThanOrEqual(
      summary?.finishedAt?.getTime() ?? Infinity,
    );
    expect(await proc.zkPlan.getResult(flaky)).toBe(100);
    expect(await proc.zkPlan.getResult(dependent)).toBe(100);
    expect(Object.fromEntries(calls)).toEqual({ f: 3, g: 1, o: 1 });
    expect(await proc.zkPlan.control.retryFailed(plan)).toEqual([]); // nothing failed any more
  });

  it('fails a PermanentError at its first try, recording its code', async () => {
    const calls = new Map<string, number>();
    const proc = open(new MemoryZooKeeper(), 'p', registry(calls));
    const plan = await proc.zkPlan.createPlan(PARENT, { maxAttempts: 5 });
    const task = await proc.zkPlan.addTask(plan, call('permanent', 'x'));
    await proc.zkPlan.markAsReady(plan);
    const failures = record(proc, 'task:failed');
    const pool = proc.zkPlan.startWorkers(PARENT, { backoff: FAST_BACKOFF });
    await expectRejects(
      () => proc.zkPlan.waitForCompletion(plan, { timeoutMs: 5_000 }),
      PlanFailedError,
    );
    await pool.stop();
    expect(calls.get('x')).toBe(1);
    expect(failures).toEqual([
      expect.objectContaining({ task, charged: true, final: true, attempts: 1 }),
    ]);
    expect((await proc.zkPlan.plans.status(plan)).failed[0]?.failure).toMatchObject({
      type: 'PermanentError',
      code: 'NO_SUCH_CUSTOMER',
      retryable: false,
    });
  });

  it('with failFast, aborts the running tasks of the plan when one fails, and starts nothing more', async () => {
    const calls = new Map<string, number>();
    const proc = open(new MemoryZooKeeper(), 'p', registry(calls));
    const plan = await proc.zkPlan.createPlan(PARENT, { failurePolicy: 'failFast' });
    const waiting = await proc.zkPlan.addTask(plan, call('waitForAbort', 'w'));
    await proc.zkPlan.markAsReady(plan);
    const pool = proc.zkPlan.startWorkers(PARENT, { count: 2, backoff: FAST_BACKOFF });
    while (!calls.has('w')) await pause(1);
    const broken = await proc.zkPlan.addTask(plan, call('permanent', 'x'));
    const failures = record(proc, 'task:failed');
    const error = await expectRejects(
      () => proc.zkPlan.waitForCompletion(plan, { timeoutMs: 5_000 }),
      PlanFailedError,
    );
    expect(error.failedTasks.map(({ task }) => task)).toEqual([broken]);
    while (aborts.length === 0) await pause(1);
    expect(aborts[0]).toBeInstanceOf(PlanAbortedError);
    const late = await proc.zkPlan.addTask(plan, call('value', 'late', 1));
    await pause(30);
    expect(calls.has('late')).toBe(false);
    await pool.stop();
    // The aborted task is not charged: it stays in the plan to run after a retryFailed.
    expect(failures.find(({ task }) => task === waiting)).toMatchObject({
      charged: false,
      final: false,
    });
    const status = await proc.zkPlan.plans.status(plan);
    expect(status.state).toBe('failed');
    expect(status.counts.runnable).toBe(2);
    expect(status.failed.map(({ task }) => task)).toEqual([broken]);
    expect(
      [waiting, late].every((task) => status.failed.every((failed) => failed.task !== task)),
    ).toBe(true);
  });

  it('deletePlan under a running task aborts it quietly; the plan is then gone for every call', async () => {
    const calls = new Map<string, number>();
    const proc = open(new MemoryZooKeeper(), 'p', registry(calls));
    const plan = await proc.zkPlan.createPlan(PARENT);
    await proc.zkPlan.addTask(plan, call('waitForAbort', 'w'));
    await proc.zkPlan.markAsReady(plan);
    const errors = record(proc, 'worker:error');
    const failures = record(proc, 'task:failed');
    const pool = proc.zkPlan.startWorkers(PARENT, { backoff: FAST_BACKOFF });
    while (!calls.has('w')) await pause(1);
    await proc.zkPlan.plans.delete(plan);
    while (aborts.length === 0) await pause(1);
    expect(aborts[0]).toBeInstanceOf(PlanDeletedError);
    await pause(10);
    await pool.stop();
    expect(failures).toEqual([]);
    expect(errors).toEqual([]);
    await expectRejects(() => proc.zkPlan.plans.status(plan), PlanNotFoundError);
    await expectRejects(() => proc.zkPlan.plans.describe(plan), PlanNotFoundError);
    await expectRejects(() => proc.zkPlan.plans.delete(plan), PlanNotFoundError);
    await expectRejects(() => proc.zkPlan.control.retryFailed(plan), PlanNotFoundError);
    await expectRejects(
      () => proc.zkPlan.waitForCompletion(plan, { timeoutMs: 1_000 }),
      PlanNotFoundError,
    );
    await expectRejects(() => proc.zkPlan.addTask(plan, call('value', 'v', 1)), PlanNotFoundError);
    expect(await proc.zkPlan.plans.list(PARENT)).toEqual([]);
    await expectRejects(() => proc.zkPlan.plans.list('/nowhere'), PlanNotFoundError);
  });

  it('waitForCompletion times out with the tasks left, or gives up when its signal aborts', async () => {
    const proc = open(new MemoryZooKeeper(), 'p', registry(new Map()));
    const plan = await proc.zkPlan.createPlan(PARENT);
    await proc.zkPlan.addTask(plan, call('value', 'v', 1));
    const timeout = await expectRejects(
      () => proc.zkPlan.waitForCompletion(plan, { timeoutMs: 20 }),
      WaitTimeoutError,
    );
    expect(timeout.remainingTasks).toBe(1);
    const giveUp = new AbortController();
    const waiting = proc.zkPlan.waitForCompletion(plan, {
      timeoutMs: 5_000,
      signal: giveUp.signal,
    });
    giveUp.abort(new Error('not any more'));
    await expect(waiting).rejects.toThrow('not any more');
    await expect(proc.zkPlan.waitForCompletion(plan, { timeoutMs: -1 })).rejects.toBeInstanceOf(
      InvalidArgumentError,
    );
  });

  it("describes a plan before it runs: each task's state, call, inputs and pending inputs", async () => {
    const proc = open(new MemoryZooKeeper(), 'p', registry(new Map()));
    const plan = await proc.zkPlan.createPlan(PARENT, { history: false });
    const a = await proc.zkPlan.addTask(plan, call('value', 'a', 1));
    const b = await proc.zkPlan.addTask(plan, call('sum', 'b'), [a, a], { keepResult: true });
    await proc.zkPlan.markAsReady(plan);
    const view = await proc.zkPlan.plans.describe(plan);
    expect(view.historyKept).toBe(false);
    expect(view.tasks).toEqual([
      expect.objectContaining({
        task: a,
        name: a.slice(plan.length + 1),
        state: 'runnable',
        fn: 'value',
        params: ['a', 1],
        inputs: [],
        pendingInputs: 0,
        keepResult: false,
      }),
      expect.objectContaining({
        task: b,
        state: 'waiting',
        fn: 'sum',
        params: ['b'],
        inputs: [a, a],
        pendingInputs: 2,
        keepResult: true,
      }),
    ]);
    expect(view.status.counts).toMatchObject({ runnable: 1, waiting: 1, remaining: 2 });
    const second = await proc.zkPlan.createPlan(PARENT); // history by default
    await proc.zkPlan.addTask(second, call('value', 'z', 0)); // not marked ready: building
    expect(
      (await proc.zkPlan.plans.list(PARENT)).map(({ plan: path, status, historyKept }) => [
        path,
        status.state,
        historyKept,
      ]),
    ).toEqual([
      [plan, 'running', false],
      [second, 'building', true],
    ]);
  });

  it('lets a task depend on a completed task only when its result was kept', async () => {
    const calls = new Map<string, number>();
    const proc = open(new MemoryZooKeeper(), 'p', registry(calls));
    const plan = await proc.zkPlan.createPlan(PARENT);
    const kept = await proc.zkPlan.addTask(plan, call('value', 'k', 4), [], { keepResult: true });
    const dropped = await proc.zkPlan.addTask(plan, call('value', 'd', 5));
    await proc.zkPlan.markAsReady(plan);
    const pool = proc.zkPlan.startWorkers(PARENT, { backoff: FAST_BACKOFF });
    await proc.zkPlan.waitForCompletion(plan, { timeoutMs: 5_000 });
    const late = await proc.zkPlan.addTask(plan, call('sum', 'late'), [kept, kept], {
      keepResult: true,
    });
    await proc.zkPlan.waitForCompletion(plan, { timeoutMs: 5_000 });
    expect(await proc.zkPlan.getResult(late)).toBe(8);
    await expectRejects(
      () => proc.zkPlan.addTask(plan, call('sum', 'never'), [dropped]),
      ArgTaskNotFoundError,
    );
    await pool.stop();
    expect(calls.has('never')).toBe(false);
    expect(await proc.zkPlan.planCompleted(plan)).toBe(true);
  });

  it('does not charge a task whose session expired while it ran: it runs again on the new session', async () => {
    const calls = new Map<string, number>();
    const proc = open(
      new MemoryZooKeeper(),
      'p',
      registry(calls, (r) =>
        r.register('slowOnce', async (ctx: Ctx) => {
          const n = (calls.get('s') ?? 0) + 1;
          calls.set('s', n);
          if (n === 1)
            await new Promise((resolve) =>
              ctx.signal.addEventListener('abort', resolve, { once: true }),
            );
          return n;
        }),
      ),
    );
    const plan = await proc.zkPlan.createPlan(PARENT, { maxAttempts: 1 });
    const task = await proc.zkPlan.addTask(plan, call('slowOnce', 's'), [], { keepResult: true });
    await proc.zkPlan.markAsReady(plan);
    const failures = record(proc, 'task:failed');
    const pool = proc.zkPlan.startWorkers(PARENT, { backoff: FAST_BACKOFF });
    while (!calls.has('s')) await pause(1);
    proc.zk.expireSession();
    await proc.zkPlan.waitForCompletion(plan, { timeoutMs: 5_000 });
    await pool.stop();
    expect(await proc.zkPlan.getResult(task)).toBe(2);
    expect(failures).toEqual([expect.objectContaining({ task, charged: false, final: false })]);
    expect(failures[0]?.error).toBeInstanceOf(OwnershipLostError);
  });

  it("fails a try that exceeds the task's timeoutMs, aborting its signal", async () => {
    const calls = new Map<string, number>();
    const proc = open(new MemoryZooKeeper(), 'p', registry(calls));
    const plan = await proc.zkPlan.createPlan(PARENT);
    const task = await proc.zkPlan.addTask(plan, call('waitForAbort', 'w'), [], {
      timeoutMs: 10,
      maxAttempts: 1,
    });
    await proc.zkPlan.markAsReady(plan);
    const pool = proc.zkPlan.startWorkers(PARENT, { backoff: FAST_BACKOFF });
    const error = await expectRejects(
      () => proc.zkPlan.waitForCompletion(plan, { timeoutMs: 5_000 }),
      PlanFailedError,
    );
    await pool.stop();
    expect(error.failedTasks).toEqual([
      {
        task,
        failure: expect.objectContaining({ code: 'TASK_TIMEOUT', type: 'TaskTimeoutError' }),
      },
    ]);
  });

  it('charges a task that names a function the worker does not have, and fails it when its tries are used up', async () => {
    const builder = open(new MemoryZooKeeper(), 'builder', new FunctionRegistry());
    const plan = await builder.zkPlan.createPlan(PARENT, { maxAttempts: 2, initialDelayMs: 0 });
    const task = await builder.zkPlan.addTask(plan, call('nowhere'));
    await builder.zkPlan.markAsReady(plan);
    const pool = builder.zkPlan.startWorkers(PARENT, { backoff: FAST_BACKOFF });
    const error = await expectRejects(
      () => builder.zkPlan.waitForCompletion(plan, { timeoutMs: 5_000 }),
      PlanFailedError,
    );
    await pool.stop();
    expect(error.failedTasks).toEqual([
      { task, failure: expect.objectContaining({ code: 'UNKNOWN_FUNCTION', attempts: 2 }) },
    ]);
  });

  it('drains on stop: a running task finishes and its result is stored', async () => {
    const calls = new Map<string, number>();
    const proc = open(
      new MemoryZooKeeper(),
      'p',
      registry(calls, (r) =>
        r.register('slow', async (ctx: Ctx) => {
          calls.set('slow', 1);
          await pause(30);
          return ctx.params[0];
        }),
      ),
    );
    const plan = await proc.zkPlan.createPlan(PARENT);
    const task = await proc.zkPlan.addTask(plan, call('slow', 'done'), [], { keepResult: true });
    await proc.zkPlan.markAsReady(plan);
    const pool = proc.zkPlan.startWorkers(PARENT, { backoff: FAST_BACKOFF, drainTimeoutMs: 5_000 });
    while (!calls.has('slow')) await pause(1);
    expect(pool.runningTasks).toEqual([task]);
    await pool.stop();
    expect(pool.runningTasks).toEqual([]);
    expect(await proc.zkPlan.getResult(task)).toBe('done');
    expect(await proc.zkPlan.planCompleted(plan)).toBe(true);
  });

  it('refuses every call once closed', async () => {
    const proc = open(new MemoryZooKeeper(), 'p', registry(new Map()));
    const plan = await proc.zkPlan.createPlan(PARENT);
    proc.zkPlan.startWorkers(PARENT, { backoff: FAST_BACKOFF });
    await proc.zkPlan.close();
    expect(proc.zkPlan.state).toBe('closed');
    expect(() => proc.zkPlan.plans.status(plan)).toThrow(IllegalStateError);
    expect(() => proc.zkPlan.startWorkers(PARENT)).toThrow(IllegalStateError);
    await proc.zkPlan.close(); // idempotent
  });
});
