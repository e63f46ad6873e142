import { describe, expect, it } from 'vitest';
import {
  FunctionRegistry,
  PermanentError,
  PlanFailedError,
  call,
  inline,
  type TaskFailure,
  type ZkPlan,
  type ZkPlanEvents,
} from '../src/index.js';
import { decodeValue, encodeValue } from '../src/testing/index.js';
import { childrenOf, putTask } from './support/raw-nodes.js';
import { nextEvent, useZooKeeper, waitFor, withDeadline } from './support/zk-test-env.js';

const env = useZooKeeper('failure-handling');

type Payload<K extends keyof ZkPlanEvents> = ZkPlanEvents[K][0];
const FAST = { backoff: { initial: 10, max: 50 } };

async function readNode<T>(zkPlan: ZkPlan, path: string): Promise<T> {
  return decodeValue(path, (await zkPlan.zk.getData(path)).data) as T;
}

async function failureOf(zkPlan: ZkPlan, task: string): Promise<TaskFailure> {
  return await readNode<TaskFailure>(zkPlan, `${task}/failed`);
}

describe('retries', () => {
  it('tries a failing task again after the retry delay, up to maxAttempts, counting failures in ZooKeeper', async () => {
    const startedAt: number[] = [];
    const functions = new FunctionRegistry().register('flaky', () => {
      startedAt.push(Date.now());
      if (startedAt.length < 3) throw new Error(`failure ${startedAt.length}`);
      return 'third time lucky';
    });
    const zkPlan = await env.zkPlan({ functions });
    const parent = env.root();
    const plan = await zkPlan.createPlan(parent, {
      maxAttempts: 3,
      initialDelayMs: 200,
      multiplier: 2,
    });
    const task = await zkPlan.addTask(plan, call('flaky'), [], { keepResult: true });
    await zkPlan.markAsReady(plan);
    const failures: Payload<'task:failed'>[] = [];
    zkPlan.on('task:failed', (event) => failures.push(event));
    const pool = zkPlan.startWorkers(parent, FAST);
    await nextEvent(zkPlan, 'task:failed');
    const attempts = await readNode<{
      failures: number;
      notBefore: Date;
      lastFailure: TaskFailure;
    }>(zkPlan, `${task}/attempts`);
    await zkPlan.waitForCompletion(plan, { timeoutMs: 20_000 });
    await pool.stop();
    expect(await zkPlan.getResult(task)).toBe('third time lucky');
    expect(attempts.failures).toBe(1);
    expect(attempts.lastFailure).toMatchObject({
      message: expect.stringContaining('failure 1'),
      code: 'TASK_FAILED',
      retryable: true,
      attempts: 1,
    });
    expect(failures.map((failure) => [failure.charged, failure.final, failure.attempts])).toEqual([
      [true, false, 1],
      [true, false, 2],
    ]);
    expect(startedAt[1]! - startedAt[0]!).toBeGreaterThanOrEqual(200);
    expect(startedAt[2]! - startedAt[1]!).toBeGreaterThanOrEqual(400);
  });

  it('per-task retry options override the plan', async () => {
    let calls = 0;
    const functions = new FunctionRegistry().register('broken', () => {
      calls += 1;
      throw new Error('nope');
    });
    const zkPlan = await env.zkPlan({ functions });
    const parent = env.root();
    const plan = await zkPlan.createPlan(parent, { maxAttempts: 5, initialDelayMs: 10 });
    const task = await zkPlan.addTask(plan, call('broken'), [], { maxAttempts: 2 });
    await zkPlan.markAsReady(plan);
    const pool = zkPlan.startWorkers(parent, FAST);
    await expect(zkPlan.waitForCompletion(plan, { timeoutMs: 20_000 })).rejects.toBeInstanceOf(
      PlanFailedError,
    );
    await pool.stop();
    expect(calls).toBe(2);
    expect((await failureOf(zkPlan, task)).attempts).toBe(2);
  });

  it('the attempt count outlives the worker that made it: another worker on another session goes on counting', async () => {
    const functions = new FunctionRegistry().register('broken', () => {
      throw new Error('always');
    });
    const first = await env.zkPlan({ functions });
    const parent = env.root();
    const plan = await first.createPlan(parent, { maxAttempts: 2, initialDelayMs: 10 });
    const task = await first.addTask(plan, call('broken'));
    await first.markAsReady(plan);
    const pool = first.startWorkers(parent, FAST);
    await nextEvent(first, 'task:failed');
    await pool.stop();
    await first.close(); // this worker and its session are gone
    const second = await env.zkPlan({ functions });
    const failed = nextEvent<Payload<'task:failed'>>(second, 'task:failed');
    const secondPool = second.startWorkers(parent, FAST);
    const event = await failed;
    await secondPool.stop();
    expect(event).toMatchObject({ final: true, attempts: 2 });
    expect((await failureOf(second, task)).attempts).toBe(2);
  });

  it('a PermanentError fails the task at once, keeping its code', async () => {
    let calls = 0;
    const functions = new FunctionRegistry().register('validate', () => {
      calls += 1;
      throw new PermanentError('customer 42 does not exist', { code: 'NO_SUCH_CUSTOMER' });
    });
    const zkPlan = await env.zkPlan({ functions });
    const parent = env.root();
    const plan = await zkPlan.createPlan(parent, { maxAttempts: 5 });
    const task = await zkPlan.addTask(plan, call('validate'));
    await zkPlan.markAsReady(plan);
    const pool = zkPlan.startWorkers(parent, FAST);
    await expect(zkPlan.waitForCompletion(plan, { timeoutMs: 20_000 })).rejects.toBeInstanceOf(
      PlanFailedError,
    );
    await pool.stop();
    expect(calls).toBe(1);
    expect(await failureOf(zkPlan, task)).toMatchObject({
      type: 'PermanentError',
      code: 'NO_SUCH_CUSTOMER',
      retryable: false,
      attempts: 1,
      message: expect.stringContaining('customer 42 does not exist'),
      stack: expect.stringContaining('PermanentError'),
      workerId: expect.any(String),
      at: expect.any(Date),
    });
  });

  it('infrastructure faults are not charged to the task (the session expiring under it)', async () => {
    const { expireSession } = await import('../src/testing/expire-session.js');
    let release: () => void = () => undefined;
    let started: () => void = () => undefined;
    const running = new Promise<void>((resolve) => (started = resolve));
    let calls = 0;
    const functions = new FunctionRegistry().register('slow', async (ctx) => {
      calls += 1;
      if (calls === 1) {
        started();
        await new Promise<void>((resolve) => {
          release = resolve;
          ctx.signal.addEventListener('abort', () => resolve(), { once: true });
        });
        throw new Error('interrupted by the abort');
      }
      return 'done';
    });
    const zkPlan = await env.zkPlan({ functions, sessionTimeoutMs: 4_000 });
    const parent = env.root();
    const plan = await zkPlan.createPlan(parent, { maxAttempts: 1 });
    const task = await zkPlan.addTask(plan, call('slow'), [], { keepResult: true });
    await zkPlan.markAsReady(plan);
    const failed = nextEvent<Payload<'task:failed'>>(zkPlan, 'task:failed');
    const pool = zkPlan.startWorkers(parent, FAST);
    await running;
    await expireSession(zkPlan.zk);
    const event = await failed;
    release();
    await zkPlan.waitForCompletion(plan, { timeoutMs: 20_000 });
    await pool.stop();
    expect(event.charged).toBe(false);
    expect(await zkPlan.getResult(task)).toBe('done'); // maxAttempts 1, yet it ran again: the first try was not charged
  });
});

describe('failed tasks and failed plans', () => {
  it('a failed task is never taken again and its dependents never run; with "continue" independent branches finish, then the plan fails', async () => {
    const ran: string[] = [];
    const functions = new FunctionRegistry()
      .register('step', async (ctx) => {
        ran.push(String(ctx.params[0]));
        await new Promise((resolve) => setTimeout(resolve, 20));
        return ctx.params[0];
      })
      .register('broken', () => {
        ran.push('broken');
        throw new Error('disk full');
      });
    const zkPlan = await env.zkPlan({ functions });
    const parent = env.root();
    const plan = await zkPlan.createPlan(parent, { maxAttempts: 2, initialDelayMs: 10 });
    const broken = await zkPlan.addTask(plan, call('broken'));
    const afterBroken = await zkPlan.addTask(plan, call('step', 'after-broken'), [broken]);
    const twoAfter = await zkPlan.addTask(plan, call('step', 'two-after'), [afterBroken]);
    let previous = await zkPlan.addTask(plan, call('step', 'branch-0'));
    for (let index = 1; index < 5; index++)
      previous = await zkPlan.addTask(plan, call('step', `branch-${index}`), [previous]);
    await zkPlan.markAsReady(plan);
    const claims: string[] = [];
    zkPlan.on('task:claimed', (event) => claims.push(event.task));
    const pool = zkPlan.startWorkers(parent, { count: 2, ...FAST });
    const error = await zkPlan
      .waitForCompletion(plan, { timeoutMs: 20_000 })
      .catch((caught: unknown) => caught);
    await new Promise((resolve) => setTimeout(resolve, 300)); // idle rounds: the failed task must not be claimed again
    await pool.stop();
    expect(error).toBeInstanceOf(PlanFailedError);
    expect((error as PlanFailedError).failedTasks.map(({ task }) => task)).toEqual([broken]);
    expect([...(error as PlanFailedError).blockedTasks].sort()).toEqual(
      [afterBroken, twoAfter].sort(),
    );
    expect((error as Error).message).toContain('disk full');
    expect(ran.filter((name) => name.startsWith('branch'))).toEqual([
      'branch-0',
      'branch-1',
      'branch-2',
      'branch-3',
      'branch-4',
    ]);
    expect(ran).not.toContain('after-broken');
    expect(claims.filter((task) => task === broken)).toHaveLength(2);
    const status = await zkPlan.plans.status(plan);
    // The 5 done branch tasks are counted from the plan's history.
    expect(status).toMatchObject({
      state: 'failed',
      counts: { total: 8, done: 5, failed: 1, blocked: 2, runnable: 0, running: 0, waiting: 0 },
    });
    expect(status.blocked.find(({ task }) => task === afterBroken)?.reason).toContain(broken);
    expect(status.failed[0]?.failure?.message).toContain('disk full');
    expect(await childrenOf(zkPlan.zk, plan)).toContain('failed');
  });

  it('failFast: once a task fails for good, running tasks are aborted and nothing new starts', async () => {
    const started: string[] = [];
    let sawAbort = false;
    let longStarted: () => void = () => undefined;
    const longRunning = new Promise<void>((resolve) => (longStarted = resolve));
    const functions = new FunctionRegistry()
      .register('long', async (ctx) => {
        started.push('long');
        longStarted();
        await new Promise<void>((resolve) =>
          ctx.signal.addEventListener('abort', () => resolve(), { once: true }),
        );
        sawAbort = ctx.signal.aborted;
        throw new Error('aborted');
      })
      .register('broken', async () => {
        await withDeadline(longRunning, 10_000, () => "'long' did not start"); // fail only once 'long' runs, so there is a running task to abort
        throw new PermanentError('bad input');
      })
      .register('later', () => started.push('later'));
    const zkPlan = await env.zkPlan({ functions });
    const parent = env.root();
    const plan = await zkPlan.createPlan(parent, { failurePolicy: 'failFast' });
    const long = await zkPlan.addTask(plan, call('long'));
    await zkPlan.addTask(plan, call('broken'));
    await zkPlan.addTask(plan, call('later'), [long]);
    await zkPlan.markAsReady(plan);
    const failures: Payload<'task:failed'>[] = [];
    zkPlan.on('task:failed', (event) => failures.push(event));
    const pool = zkPlan.startWorkers(parent, { count: 2, ...FAST });
    const error = await zkPlan
      .waitForCompletion(plan, { timeoutMs: 20_000 })
      .catch((caught: unknown) => caught);
    await waitFor("the aborted 'long' to be reported failed", () =>
      failures.some((event) => event.task === long),
    );
    await pool.stop();
    expect(failures.find((event) => event.task === long)).toMatchObject({
      charged: false,
      final: false,
    });
    expect(error).toBeInstanceOf(PlanFailedError);
    expect(sawAbort).toBe(true);
    expect(started).toEqual(['long']);
    const status = await zkPlan.plans.status(plan);
    expect(status.state).toBe('failed');
    expect(status.counts.failed).toBe(1); // the aborted task was not charged: it is not failed, just not run
  });

  it('retryFailed lets failed tasks run again from scratch, and their dependents after them', async () => {
    let fixed = false;
    const functions = new FunctionRegistry()
      .register('fetch', () => {
        if (!fixed) throw new Error('upstream down');
        return 20;
      })
      .register('addOne', (_ctx, value: number) => value + 1);
    const zkPlan = await env.zkPlan({ functions });
    const parent = env.root();
    const plan = await zkPlan.createPlan(parent, { maxAttempts: 1 });
    const fetch = await zkPlan.addTask(plan, call('fetch'));
    const result = await zkPlan.addTask(plan, call('addOne'), [fetch], { keepResult: true });
    await zkPlan.markAsReady(plan);
    const pool = zkPlan.startWorkers(parent, FAST);
    await expect(zkPlan.waitForCompletion(plan, { timeoutMs: 20_000 })).rejects.toBeInstanceOf(
      PlanFailedError,
    );
    fixed = true;
    expect(await zkPlan.control.retryFailed(plan)).toEqual([fetch]);
    await zkPlan.waitForCompletion(plan, { timeoutMs: 20_000 });
    await pool.stop();
    expect(await zkPlan.getResult(result)).toBe(21);
    expect(await childrenOf(zkPlan.zk, plan)).not.toContain('failed');
  });

  it('a worker that died after counting the last attempt but before marking the task failed: the next one marks it without running it', async () => {
    let calls = 0;
    const functions = new FunctionRegistry().register('f', () => (calls += 1));
    const zkPlan = await env.zkPlan({ functions });
    const parent = env.root();
    const plan = await zkPlan.createPlan(parent, { maxAttempts: 2 });
    const task = await zkPlan.addTask(plan, call('f'));
    const lastFailure = {
      type: 'Error',
      message: 'boom',
      code: 'TASK_FAILED',
      stack: undefined,
      retryable: true,
      attempts: 2,
      workerId: 'dead',
      at: new Date(),
    };
    await zkPlan.zk.create(
      `${task}/attempts`,
      encodeValue({ failures: 2, notBefore: new Date(0), lastFailure }, 'attempts'),
    );
    await zkPlan.markAsReady(plan);
    const pool = zkPlan.startWorkers(parent, FAST);
    await expect(zkPlan.waitForCompletion(plan, { timeoutMs: 20_000 })).rejects.toBeInstanceOf(
      PlanFailedError,
    );
    await pool.stop();
    expect(calls).toBe(0);
    expect((await failureOf(zkPlan, task)).message).toBe('boom');
  });
});

describe('bad input: a clear error, recorded, and the same worker then completes a healthy task', () => {
  interface Case {
    readonly name: string;
    readonly code: string;
    readonly message: RegExp;
    readonly add: (zkPlan: ZkPlan, plan: string) => Promise<string>;
    readonly options?: { inlineTimeoutMs?: number; allowInline?: boolean };
  }
  const functions = () =>
    new FunctionRegistry()
      .register('healthy', () => 'ok')
      .register('throwsString', () => {
        throw 'a plain string'; // eslint-disable-line no-throw-literal
      })
      .register('returnsFunction', () => () => 1)
      .register('returnsSymbol', () => Symbol('s'))
      .register('neverSettles', () => new Promise(() => undefined));
  const cases: Case[] = [
    {
      name: 'an unknown function name',
      code: 'UNKNOWN_FUNCTION',
      message: /nobody-knows.*is not registered/,
      add: (z, p) =>
        putTask(z.zk, `${p}/task-0000000000`, ['ready'], { fn: 'nobody-knows', params: [] }),
    },
    {
      name: 'a task value that is not superjson',
      code: 'MALFORMED_NODE',
      message: /not JSON/,
      add: async (z, p) => {
        await z.zk.create(`${p}/task-0000000000`, Buffer.from('(fn [$] 1)'));
        await z.zk.create(`${p}/task-0000000000/ready`);
        return `${p}/task-0000000000`;
      },
    },
    {
      name: 'a task value without fn or source',
      code: 'MALFORMED_NODE',
      message: /neither a string "fn"/,
      add: (z, p) => putTask(z.zk, `${p}/task-0000000000`, ['ready'], { params: [] }),
    },
    {
      name: 'a function that throws a non-Error',
      code: 'TASK_FAILED',
      message: /a plain string/,
      add: (z, p) => z.addTask(p, call('throwsString')),
    },
    {
      name: 'a function that returns a function',
      code: 'UNSERIALIZABLE_VALUE',
      message: /is a function/,
      add: (z, p) => z.addTask(p, call('returnsFunction')),
    },
    {
      name: 'a function that returns a symbol',
      code: 'UNSERIALIZABLE_VALUE',
      message: /is a symbol/,
      add: (z, p) => z.addTask(p, call('returnsSymbol')),
    },
    {
      name: 'a function that never settles (timeoutMs)',
      code: 'TASK_TIMEOUT',
      message: /did not finish within 200 ms/,
      add: (z, p) => z.addTask(p, call('neverSettles'), [], { timeoutMs: 200 }),
    },
    {
      name: 'an inline function that reaches for process',
      code: 'TASK_FAILED',
      message: /process is not defined/,
      add: (z, p) =>
        z.addTask(
          p,
          inline(() => process.exit(1)),
        ),
      options: { allowInline: true },
    },
    {
      name: 'an inline function that reaches for the host through constructors',
      code: 'TASK_FAILED',
      message: /Code generation from strings disallowed/,
      add: (z, p) =>
        z.addTask(
          p,
          inline(function (this: unknown) {
            return ({}.constructor.constructor('return process')() as { pid: number }).pid;
          }),
        ),
      options: { allowInline: true },
    },
    {
      name: 'an inline function that loops forever',
      code: 'TASK_FAILED',
      message: /timed out/,
      add: (z, p) =>
        z.addTask(
          p,
          inline(() => {
            for (;;);
          }),
        ),
      options: { allowInline: true, inlineTimeoutMs: 200 },
    },
  ];

  for (const testCase of cases) {
    it(testCase.name, async () => {
      const zkPlan = await env.zkPlan({ functions: functions() });
      const parent = env.root();
      const plan = await zkPlan.createPlan(parent, { maxAttempts: 1 });
      const bad = await testCase.add(zkPlan, plan);
      const healthy = await zkPlan.addTask(plan, call('healthy'), [], { keepResult: true });
      await zkPlan.markAsReady(plan);
      const failed = nextEvent<Payload<'task:failed'>>(zkPlan, 'task:failed');
      const completed = nextEvent<Payload<'task:completed'>>(
        zkPlan,
        'task:completed',
        (event) => event.task === healthy,
      );
      const stop = new AbortController();
      const loop = zkPlan.worker(parent, { ...FAST, ...testCase.options }, stop.signal);
      const failure = await failed;
      const done = await completed;
      stop.abort();
      await loop;
      expect(failure.task).toBe(bad);
      expect((failure.error as Error & { code: string }).code).toBe(testCase.code);
      expect(failure.error.message).toMatch(testCase.message);
      expect(failure.error.message).toContain(bad);
      expect(done.workerId).toBe(failure.workerId);
      const recorded = await failureOf(zkPlan, bad);
      expect(recorded.message).toMatch(testCase.message);
      expect(recorded.code).toBe(testCase.code);
      expect(await zkPlan.getResult(healthy)).toBe('ok');
    });
  }

  it('dependencies written directly that never resolve are reported as blocked', async () => {
    const zkPlan = await env.zkPlan();
    const parent = env.root();
    const plan = await zkPlan.createPlan(parent);
    const orphan = await putTask(
      zkPlan.zk,
      `${plan}/task-0000000000`,
      ['ready', 'dep-0000000007'],
      { fn: 'f', params: [] },
    );
    await zkPlan.markAsReady(plan);
    const status = await zkPlan.plans.status(plan);
    expect(status.state).toBe('running');
    expect(status.blocked).toEqual([
      { task: orphan, reason: expect.stringContaining(`${orphan}/dep-0000000007 has no producer`) },
    ]);
    expect(status.counts).toMatchObject({ total: 1, blocked: 1, waiting: 0 });
  });
});
