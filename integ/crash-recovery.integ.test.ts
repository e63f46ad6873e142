import { describe, expect, it } from 'vitest';
import { FunctionRegistry, call, type ZkPlan, type ZkPlanEvents } from '../src/index.js';
import { decodeValue, encodeValue } from '../src/testing/index.js';
import { childrenOf, put } from './support/raw-nodes.js';
import { nextEvent, useZooKeeper, waitFor } from './support/zk-test-env.js';

/**
 * What a crash leaves at each step of performing a task, and that the next worker finishes it.
 * Each scenario builds the state a worker that died at that point leaves (its owner node went
 * with its session), then lets a fresh worker run the plan.
 */
const env = useZooKeeper('crash-recovery');

type Payload<K extends keyof ZkPlanEvents> = ZkPlanEvents[K][0];

interface Scenario {
  zkPlan: ZkPlan;
  parent: string;
  plan: string;
  producer: string;
  dependents: string[];
  runs: Map<string, number>;
}

/** A plan `producer → dependent ×3` (each dependent adds its param to the producer's result). */
async function scenario(): Promise<Scenario> {
  const runs = new Map<string, number>();
  const count = (name: string) => runs.set(name, (runs.get(name) ?? 0) + 1);
  const functions = new FunctionRegistry()
    .register('produce', () => {
      count('produce');
      return 40;
    })
    .register('plus', (ctx, input: number) => {
      count('plus');
      return input + (ctx.params[0] as number);
    });
  const zkPlan = await env.zkPlan({ functions });
  const parent = env.root();
  const plan = await zkPlan.createPlan(parent);
  const producer = await zkPlan.addTask(plan, call('produce'), [], { keepResult: true });
  const dependents = [];
  for (const addend of [1, 2, 3])
    dependents.push(
      await zkPlan.addTask(plan, call('plus', addend), [producer], { keepResult: true }),
    );
  return { zkPlan, parent, plan, producer, dependents, runs };
}

async function runToCompletion({ zkPlan, parent, plan }: Scenario): Promise<void> {
  await zkPlan.markAsReady(plan);
  const pool = zkPlan.startWorkers(parent, { count: 2, backoff: { initial: 10, max: 50 } });
  await zkPlan.waitForCompletion(plan, { timeoutMs: 15_000 });
  await pool.stop();
}

async function expectCorrectOutcome(s: Scenario, expectedProducerRuns: number): Promise<void> {
  expect(await s.zkPlan.planCompleted(s.plan)).toBe(true);
  expect(await Promise.all(s.dependents.map((task) => s.zkPlan.getResult(task)))).toEqual([
    41, 42, 43,
  ]);
  expect(await s.zkPlan.getResult(s.producer)).toBe(40);
  expect(s.runs.get('produce') ?? 0).toBe(expectedProducerRuns);
  expect(s.runs.get('plus')).toBe(3);
}

async function depsOf(zkPlan: ZkPlan, task: string): Promise<string[]> {
  return ((await childrenOf(zkPlan.zk, task)) ?? []).filter((name) => name.startsWith('dep-'));
}

describe('a crash at any step leaves a state the next worker completes', () => {
  it('crash while running the function (owner gone with the session): the task runs again', async () => {
    const s = await scenario();
    const dead = await env.client();
    await dead.create(
      `${s.producer}/owner`,
      encodeValue({ workerId: 'dead', claimedAt: new Date() }, 'owner'),
      'ephemeral',
    );
    dead.close(); // the session ends: its ephemeral owner node goes with it
    await runToCompletion(s);
    await expectCorrectOutcome(s, 1);
  });

  it('crash after storing the result: the stored result is reused, the function does not run again', async () => {
    const s = await scenario();
    await s.zkPlan.zk.create(`${s.producer}/result`, encodeValue(40, 'result'));
    await runToCompletion(s);
    await expectCorrectOutcome(s, 0);
  });

  it('crash after keeping the result and removing ready: the task is finished from its result', async () => {
    const s = await scenario();
    await s.zkPlan.zk.create(`${s.producer}/result`, encodeValue(40, 'result'));
    await put(s.zkPlan.zk, `${s.plan}/result-${s.producer.slice(-10)}`, 40);
    await s.zkPlan.zk.delete(`${s.producer}/ready`);
    await runToCompletion(s);
    await expectCorrectOutcome(s, 0);
  });

  it('crash part-way through propagation (arg written, dep kept; arg and dep removed; untouched): every dependent gets its input once', async () => {
    const s = await scenario();
    const zk = s.zkPlan.zk;
    await zk.create(`${s.producer}/result`, encodeValue(40, 'result'));
    await zk.delete(`${s.producer}/ready`);
    const [first, second] = s.dependents as [string, string, string];
    const [firstDep] = await depsOf(s.zkPlan, first);
    const [secondDep] = await depsOf(s.zkPlan, second);
    await zk.create(`${first}/arg-${firstDep!.slice(4)}`, encodeValue(40, 'arg')); // arg created, dep not yet deleted
    await zk.create(`${second}/arg-${secondDep!.slice(4)}`, encodeValue(40, 'arg'));
    await zk.delete(`${second}/${secondDep}`); // fully propagated
    await runToCompletion(s);
    await expectCorrectOutcome(s, 0);
  });

  it('crash while deleting the finished task, before result was deleted: finished again without running anything', async () => {
    const s = await scenario();
    const zk = s.zkPlan.zk;
    // Propagate by hand as the dead worker did, then delete some of the task's children.
    await zk.create(`${s.producer}/result`, encodeValue(40, 'result'));
    await zk.delete(`${s.producer}/ready`);
    for (const dependent of s.dependents) {
      const [dep] = await depsOf(s.zkPlan, dependent);
      await zk.create(`${dependent}/arg-${dep!.slice(4)}`, encodeValue(40, 'arg'));
      await zk.delete(`${dependent}/${dep}`);
    }
    const provs = ((await childrenOf(zk, s.producer)) ?? []).filter((name) =>
      name.startsWith('prov-'),
    );
    await zk.delete(`${s.producer}/${provs[0]}`);
    await put(zk, `${s.plan}/result-${s.producer.slice(-10)}`, 40);
    await runToCompletion(s);
    await expectCorrectOutcome(s, 0);
  });

  it('crash after deleting every child but before deleting the node: the empty node is removed', async () => {
    const s = await scenario();
    const zk = s.zkPlan.zk;
    const emptied = await s.zkPlan.addTask(s.plan, call('produce'));
    await zk.deleteRecursive(`${emptied}/ready`);
    expect(await childrenOf(zk, emptied)).toEqual([]);
    await runToCompletion(s);
    expect(await zk.exists(emptied)).toBeUndefined();
    await expectCorrectOutcome(s, 1);
  });

  it('crash of a whole worker process mid-task: another worker takes the task once the session is gone (at-least-once)', async () => {
    let started = 0;
    let release: () => void = () => undefined;
    const blocked = new Promise<void>((resolve) => (release = resolve));
    const functions = new FunctionRegistry().register('slow', async () => {
      started += 1;
      if (started === 1) await blocked; // the first run never finishes before its worker dies
      return 'done';
    });
    const doomed = await env.zkPlan({ functions });
    const survivor = await env.zkPlan({ functions });
    const parent = env.root();
    const plan = await doomed.createPlan(parent);
    const task = await doomed.addTask(plan, call('slow'), [], { keepResult: true });
    await doomed.markAsReady(plan);
    const claimed = nextEvent<Payload<'task:claimed'>>(doomed, 'task:claimed');
    doomed.startWorkers(parent, { backoff: { initial: 10 } });
    await claimed;
    await waitFor('the first run to start', () => started === 1);
    let survivorIdleRounds = 0;
    survivor.on('worker:idle', () => (survivorIdleRounds += 1));
    const survivorPool = survivor.startWorkers(parent, { backoff: { initial: 10, max: 50 } });
    // The survivor looks for work (its first round scans the plan) and finds the task owned: a few empty rounds.
    await waitFor('3 idle rounds of the survivor', () => survivorIdleRounds >= 3);
    expect(started).toBe(1); // owned by the live doomed worker: nobody else runs it
    doomed.zk.close(); // the process "dies": its session, and so its owner node, are gone at once
    await survivor.waitForCompletion(plan, { timeoutMs: 10_000 });
    release();
    await survivorPool.stop();
    expect(started).toBe(2);
    expect(await survivor.getResult(task)).toBe('done');
  });

  it('the late result of a worker whose session ended is not written (fenced by the session)', async () => {
    let release: () => void = () => undefined;
    let firstRunStarted: () => void = () => undefined;
    const blocked = new Promise<void>((resolve) => (release = resolve));
    const started = new Promise<void>((resolve) => (firstRunStarted = resolve));
    let runs = 0;
    const functions = new FunctionRegistry().register('answer', async () => {
      runs += 1;
      if (runs === 1) {
        firstRunStarted();
        await blocked;
        return 'stale';
      }
      return 'fresh';
    });
    const doomed = await env.zkPlan({ functions });
    const survivor = await env.zkPlan({ functions });
    const parent = env.root();
    const plan = await doomed.createPlan(parent);
    const task = await doomed.addTask(plan, call('answer'), [], { keepResult: true });
    const dependent = await doomed.addTask(plan, call('answer'), [task]);
    await doomed.markAsReady(plan);
    const failed = nextEvent<Payload<'task:failed'>>(doomed, 'task:failed');
    doomed.startWorkers(parent, { backoff: { initial: 10 } });
    await started;
    doomed.zk.close();
    const survivorPool = survivor.startWorkers(parent, { backoff: { initial: 10, max: 50 } });
    await survivor.waitForCompletion(plan, { timeoutMs: 10_000 });
    release();
    const failure = await failed;
    await survivorPool.stop();
    expect(failure.task).toBe(task);
    expect(await survivor.getResult(task)).toBe('fresh');
    expect(await survivor.zk.exists(dependent)).toBeUndefined();
  });
});

describe('exclusive ownership while a session lives', () => {
  it('a task owned by a live worker is never taken by another, however long it runs', async () => {
    const claims: Payload<'task:claimed'>[] = [];
    let release: () => void = () => undefined;
    const blocked = new Promise<void>((resolve) => (release = resolve));
    const functions = new FunctionRegistry().register('long', async () => {
      await blocked;
      return 1;
    });
    const first = await env.zkPlan({ functions });
    const second = await env.zkPlan({ functions });
    first.on('task:claimed', (event) => claims.push(event));
    second.on('task:claimed', (event) => claims.push(event));
    const parent = env.root();
    const plan = await first.createPlan(parent);
    await first.addTask(plan, call('long'));
    await first.markAsReady(plan);
    const pools = [
      first.startWorkers(parent, { count: 3, backoff: { initial: 5, max: 20 } }),
      second.startWorkers(parent, { count: 3, backoff: { initial: 5, max: 20 } }),
    ];
    await waitFor('the task to be claimed', () => claims.length > 0);
    await new Promise((resolve) => setTimeout(resolve, 1_000)); // ~50 idle rounds per loop
    release();
    await first.waitForCompletion(plan, { timeoutMs: 10_000 });
    await Promise.all(pools.map((pool) => pool.stop()));
    expect(claims).toHaveLength(1);
  });
});

describe('values', () => {
  it('results travel between tasks as superjson (Date, Map, Set, BigInt, undefined survive)', async () => {
    const value = {
      when: new Date(0),
      tally: new Map([['a', 1n]]),
      tags: new Set(['x']),
      missing: undefined,
      nested: [{ deep: new Date(1) }],
    };
    const functions = new FunctionRegistry()
      .register('make', () => value)
      .register('echo', (_ctx, input: unknown) => input);
    const zkPlan = await env.zkPlan({ functions });
    const parent = env.root();
    const plan = await zkPlan.createPlan(parent);
    const make = await zkPlan.addTask(plan, call('make'));
    const echo = await zkPlan.addTask(plan, call('echo'), [make], { keepResult: true });
    await zkPlan.markAsReady(plan);
    const pool = zkPlan.startWorkers(parent, { backoff: { initial: 10 } });
    await zkPlan.waitForCompletion(plan, { timeoutMs: 10_000 });
    await pool.stop();
    const result = await zkPlan.getResult(echo);
    expect(result).toEqual(value);
    expect(Object.keys(result as object)).toContain('missing');
    const stored = await zkPlan.zk.getData(`${plan}/result-${echo.slice(-10)}`);
    expect(decodeValue('kept', stored.data)).toEqual(value);
  });
});

describe('session expiry of a worker', () => {
  it('aborts the running task, writes nothing for it, and the worker goes on on a new session', async () => {
    const { expireSession } = await import('../src/testing/expire-session.js');
    let firstRunStarted: () => void = () => undefined;
    const started = new Promise<void>((resolve) => (firstRunStarted = resolve));
    const seenAbort: boolean[] = [];
    let runs = 0;
    const functions = new FunctionRegistry()
      .register('watchful', async (ctx) => {
        runs += 1;
        if (runs > 1) return `run ${runs}`;
        firstRunStarted();
        await new Promise<void>((resolve) =>
          ctx.signal.addEventListener('abort', () => resolve(), { once: true }),
        );
        seenAbort.push(ctx.signal.aborted);
        return 'stale';
      })
      .register('after', () => 'after expiry');
    const worker = await env.zkPlan({ functions, sessionTimeoutMs: 4_000 });
    const parent = env.root();
    const plan = await worker.createPlan(parent);
    const task = await worker.addTask(plan, call('watchful'), [], { keepResult: true });
    await worker.markAsReady(plan);
    const failures: Payload<'task:failed'>[] = [];
    worker.on('task:failed', (event) => failures.push(event));
    const pool = worker.startWorkers(parent, { backoff: { initial: 10, max: 100 } });
    await started;
    const oldSession = worker.zk.session;
    await expireSession(worker.zk);
    await worker.waitForCompletion(plan, { timeoutMs: 20_000 });
    const later = await worker.addTask(plan, call('after'), [], { keepResult: true });
    await worker.waitForCompletion(plan, { timeoutMs: 20_000 });
    await pool.stop();
    expect(seenAbort).toEqual([true]);
    expect(failures.map((failure) => failure.error.name)).toContain('OwnershipLostError');
    expect(await worker.getResult(task)).toBe('run 2');
    expect(worker.zk.session.generation).toBe(oldSession.generation + 1);
    expect(await worker.getResult(later)).toBe('after expiry');
  });
});
