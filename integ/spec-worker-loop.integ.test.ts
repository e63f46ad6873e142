import { describe, expect, it } from 'vitest';
import {
  FunctionRegistry,
  MalformedNodeError,
  TaskExecutionError,
  UnknownFunctionError,
  ResultTooLargeError,
  call,
  type ZkPlanEvents,
} from '../src/index.js';
import { calcSleepTime } from '../src/worker/backoff.js';
import { childrenOf, put, putTask } from './support/raw-nodes.js';
import { nextEvent, useZooKeeper } from './support/zk-test-env.js';

const env = useZooKeeper('spec-worker-loop');

type Payload<K extends keyof ZkPlanEvents> = ZkPlanEvents[K][0];

describe('worker loop (spec behaviours on real znodes)', () => {
  it('takes a ready task from any plan under the parent and performs it', async () => {
    const functions = new FunctionRegistry().register('seven', () => 7);
    const zkPlan = await env.zkPlan({ functions });
    const parent = env.root();
    const plan = await zkPlan.createPlan(parent);
    const task = await zkPlan.addTask(plan, call('seven'), [], { keepResult: true });
    await zkPlan.markAsReady(plan);
    const stop = new AbortController();
    const loop = zkPlan.worker(parent, {}, stop.signal);
    await zkPlan.waitForCompletion(plan, { timeoutMs: 10_000 });
    stop.abort();
    await loop;
    expect(await zkPlan.getResult(task)).toBe(7);
  });

  it('sleeps calcSleepTime(attrs, n) after the n-th empty round in a row', async () => {
    const zkPlan = await env.zkPlan();
    const attrs = { backoff: { initial: 5, increase: 2, max: 40 } };
    const idle: Payload<'worker:idle'>[] = [];
    zkPlan.on('worker:idle', (event) => idle.push(event));
    const stop = new AbortController();
    const loop = zkPlan.worker(env.root(), attrs, stop.signal);
    await nextEvent<Payload<'worker:idle'>>(zkPlan, 'worker:idle', (event) => event.round === 5);
    stop.abort();
    await loop;
    expect(idle.slice(0, 6).map((event) => event.sleepMs)).toEqual(
      [0, 1, 2, 3, 4, 5].map((round) => calcSleepTime(attrs.backoff, round)),
    );
    expect(idle.slice(0, 6).map((event) => event.sleepMs)).toEqual([5, 10, 20, 40, 40, 40]);
  });

  it('starts the back-off over after it performed a task', async () => {
    const functions = new FunctionRegistry().register('noop', () => null);
    const zkPlan = await env.zkPlan({ functions });
    const parent = env.root();
    const idle: Payload<'worker:idle'>[] = [];
    zkPlan.on('worker:idle', (event) => idle.push(event));
    const stop = new AbortController();
    const loop = zkPlan.worker(
      parent,
      { backoff: { initial: 5, increase: 2, max: 20 } },
      stop.signal,
    );
    await nextEvent<Payload<'worker:idle'>>(zkPlan, 'worker:idle', (event) => event.round === 4);
    const plan = await zkPlan.createPlan(parent);
    await zkPlan.addTask(plan, call('noop'));
    await zkPlan.markAsReady(plan);
    await nextEvent(zkPlan, 'task:completed');
    const afterTask = await nextEvent<Payload<'worker:idle'>>(zkPlan, 'worker:idle');
    stop.abort();
    await loop;
    expect(afterTask.round).toBe(0);
    expect(afterTask.sleepMs).toBe(5);
  });

  it('removes its owner node when performing a task fails, so the task is taken again', async () => {
    let calls = 0;
    const functions = new FunctionRegistry().register('flaky', () => {
      calls += 1;
      if (calls === 1) throw new Error('first attempt fails');
      return 'second attempt';
    });
    const zkPlan = await env.zkPlan({ functions });
    const parent = env.root();
    const plan = await zkPlan.createPlan(parent);
    const task = await zkPlan.addTask(plan, call('flaky'), [], { keepResult: true });
    await zkPlan.markAsReady(plan);
    const failed = nextEvent<Payload<'task:failed'>>(zkPlan, 'task:failed');
    const stop = new AbortController();
    const loop = zkPlan.worker(parent, { backoff: { initial: 20, max: 50 } }, stop.signal);
    const failure = await failed;
    expect(failure.task).toBe(task);
    expect(failure.error).toBeInstanceOf(TaskExecutionError);
    expect(failure.error.message).toContain('first attempt fails');
    await zkPlan.waitForCompletion(plan, { timeoutMs: 10_000 });
    stop.abort();
    await loop;
    expect(calls).toBe(2);
    expect(await zkPlan.getResult(task)).toBe('second attempt');
  });

  it('leaves a failing task ready and unowned between attempts', async () => {
    const functions = new FunctionRegistry().register('broken', () => {
      throw new Error('always fails');
    });
    const zkPlan = await env.zkPlan({ functions });
    const parent = env.root();
    const plan = await zkPlan.createPlan(parent);
    const task = await zkPlan.addTask(plan, call('broken'));
    await zkPlan.markAsReady(plan);
    const stop = new AbortController();
    const loop = zkPlan.worker(parent, { backoff: { initial: 2_000 } }, stop.signal);
    await nextEvent(zkPlan, 'task:failed');
    await nextEvent(zkPlan, 'worker:idle'); // the release happened before the loop rests
    expect(await childrenOf(zkPlan.zk, task)).toEqual(['attempts', 'ready']); // no owner: any worker may retry it
    stop.abort();
    await loop;
  });

  it('ends within a second when its signal aborts in the middle of a long sleep', async () => {
    const zkPlan = await env.zkPlan();
    const stop = new AbortController();
    const loop = zkPlan.worker(env.root(), { backoff: { initial: 10_000 } }, stop.signal);
    await nextEvent(zkPlan, 'worker:idle');
    const abortedAt = performance.now();
    stop.abort();
    await loop;
    expect(performance.now() - abortedAt).toBeLessThan(1_000);
  });

  it('keeps going after a malformed task node and an unknown function, and runs a healthy task', async () => {
    const functions = new FunctionRegistry().register('healthy', () => 'ok');
    const zkPlan = await env.zkPlan({ functions });
    const parent = env.root();
    const plan = await put(zkPlan.zk, `${parent}/plan-0000000000`); // written by another tool: no runnable index, scanned
    const malformed = `${plan}/task-0000000000`;
    await zkPlan.zk.create(malformed, Buffer.from('not superjson'));
    await zkPlan.zk.create(`${malformed}/ready`);
    const unknown = await putTask(zkPlan.zk, `${plan}/task-0000000001`, ['ready'], {
      fn: 'nobody-registered-this',
      params: [],
    });
    const healthy = await zkPlan.addTask(plan, call('healthy'), [], { keepResult: true });
    await zkPlan.markAsReady(plan);
    const failures = new Map<string, Error>();
    zkPlan.on('task:failed', (event) => failures.set(event.task, event.error));
    const stop = new AbortController();
    const loop = zkPlan.worker(parent, { backoff: { initial: 10, max: 50 } }, stop.signal);
    await nextEvent<Payload<'task:completed'>>(
      zkPlan,
      'task:completed',
      (event) => event.task === healthy,
    );
    stop.abort();
    await loop;
    expect(await zkPlan.getResult(healthy)).toBe('ok');
    expect(failures.get(malformed)).toBeInstanceOf(MalformedNodeError);
    expect(failures.get(malformed)?.message).toContain(malformed);
    expect(failures.get(unknown)).toBeInstanceOf(UnknownFunctionError);
    expect(failures.get(unknown)?.message).toContain('nobody-registered-this');
    expect(await childrenOf(zkPlan.zk, unknown)).toEqual(['attempts', 'ready']); // left for a worker that knows the function
    expect(await childrenOf(zkPlan.zk, malformed)).toEqual(['attempts', 'failed', 'ready']); // trying again cannot help
  });

  it('hands results larger than a znode to dependents in chunks (5 MB through two hops)', async () => {
    const big = 'x'.repeat(5_000_000);
    const functions = new FunctionRegistry()
      .register('huge', () => big)
      .register('echo', (_ctx, input: string) => input)
      .register('length', (_ctx, input: string) => input.length);
    const zkPlan = await env.zkPlan({ functions });
    const parent = env.root();
    const plan = await zkPlan.createPlan(parent);
    const huge = await zkPlan.addTask(plan, call('huge'));
    const echo = await zkPlan.addTask(plan, call('echo'), [huge], { keepResult: true });
    const length = await zkPlan.addTask(plan, call('length'), [echo], { keepResult: true });
    await zkPlan.markAsReady(plan);
    const pool = zkPlan.startWorkers(parent, { count: 2, backoff: { initial: 10, max: 50 } });
    await zkPlan.waitForCompletion(plan, { timeoutMs: 30_000 });
    await pool.stop();
    expect(await zkPlan.getResult(length)).toBe(5_000_000);
    expect(await zkPlan.getResult(echo)).toBe(big);
    expect(zkPlan.zk.state).toBe('connected');
  });

  it('refuses a result over maxResultBytes (RESULT_TOO_LARGE, not retried), and goes on', async () => {
    const functions = new FunctionRegistry()
      .register('huge', () => 'x'.repeat(1_100_000))
      .register('small', () => 'small');
    const zkPlan = await env.zkPlan({ functions });
    const parent = env.root();
    const plan = await zkPlan.createPlan(parent);
    const huge = await zkPlan.addTask(plan, call('huge'));
    const small = await zkPlan.addTask(plan, call('small'), [], { keepResult: true });
    await zkPlan.markAsReady(plan);
    const failed = nextEvent<Payload<'task:failed'>>(zkPlan, 'task:failed');
    const smallDone = nextEvent<Payload<'task:completed'>>(
      zkPlan,
      'task:completed',
      (event) => event.task === small,
    );
    const stop = new AbortController();
    const loop = zkPlan.worker(
      parent,
      { backoff: { initial: 10, max: 50 }, maxResultBytes: 1_000_000 },
      stop.signal,
    );
    const failure = await failed;
    await smallDone;
    stop.abort();
    await loop;
    expect(failure.task).toBe(huge);
    expect(failure.error).toBeInstanceOf(ResultTooLargeError);
    expect(failure).toMatchObject({ charged: true, final: true });
    expect(failure.error.message).toContain(huge);
    expect(await zkPlan.getResult(small)).toBe('small');
    expect(await zkPlan.zk.exists(`${huge}/result`)).toBeUndefined();
  });

  it('runs several loops on one session without two of them running the same task', async () => {
    const running = new Map<number, number>();
    let overlaps = 0;
    const functions = new FunctionRegistry().register('slow', async (ctx) => {
      const id = ctx.params[0] as number;
      running.set(id, (running.get(id) ?? 0) + 1);
      if (running.get(id) !== 1) overlaps += 1;
      await new Promise((resolve) => setTimeout(resolve, 20));
      running.set(id, (running.get(id) ?? 1) - 1);
      return id;
    });
    const zkPlan = await env.zkPlan({ functions });
    const parent = env.root();
    const plan = await zkPlan.createPlan(parent);
    for (let id = 0; id < 30; id++) await zkPlan.addTask(plan, call('slow', id));
    await zkPlan.markAsReady(plan);
    const completed: string[] = [];
    zkPlan.on('task:completed', (event) => completed.push(event.task));
    const pool = zkPlan.startWorkers(parent, { count: 6, backoff: { initial: 10, max: 100 } });
    await zkPlan.waitForCompletion(plan, { timeoutMs: 30_000 });
    await pool.stop();
    expect(overlaps).toBe(0);
    expect(new Set(completed).size).toBe(30);
    expect(completed).toHaveLength(30);
  });

  it('a plan put under the parent after the loop started is picked up', async () => {
    const functions = new FunctionRegistry().register('late', () => 'late');
    const zkPlan = await env.zkPlan({ functions });
    const builder = await env.zkPlan({ functions });
    const parent = env.root();
    await put(zkPlan.zk, parent);
    const stop = new AbortController();
    const loop = zkPlan.worker(parent, { backoff: { initial: 10, max: 100 } }, stop.signal);
    await nextEvent(zkPlan, 'worker:idle');
    const plan = await builder.createPlan(parent);
    const task = await builder.addTask(plan, call('late'), [], { keepResult: true });
    await builder.markAsReady(plan);
    await builder.waitForCompletion(plan, { timeoutMs: 10_000 });
    stop.abort();
    await loop;
    expect(await builder.getResult(task)).toBe('late');
  });
});
