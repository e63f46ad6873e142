import { describe, expect, it } from 'vitest';
import {
  FunctionRegistry,
  InlineDisabledError,
  call,
  inline,
  type ZkPlanEvents,
} from '../src/index.js';
import { childrenOf } from './support/raw-nodes.js';
import { nextEvent, useZooKeeper, waitFor } from './support/zk-test-env.js';

const env = useZooKeeper('inline');

type Payload<K extends keyof ZkPlanEvents> = ZkPlanEvents[K][0];

describe('inline functions', () => {
  it('are refused by workers started without allowInline: the task fails with a clear error and stays in the plan', async () => {
    const zkPlan = await env.zkPlan();
    const parent = env.root();
    const plan = await zkPlan.createPlan(parent);
    const task = await zkPlan.addTask(
      plan,
      inline(() => 1),
    );
    await zkPlan.markAsReady(plan);
    const failed = nextEvent<Payload<'task:failed'>>(zkPlan, 'task:failed');
    const pool = zkPlan.startWorkers(parent, { backoff: { initial: 10, max: 50 } });
    const failure = await failed;
    await pool.stop();
    expect(failure.error).toBeInstanceOf(InlineDisabledError);
    expect(failure.error.message).toContain(task);
    expect(failure.error.message).toContain('allowInline');
    expect(failure.charged).toBe(true); // counted: a plan must not wait forever for a worker that allows inline code
    expect(await childrenOf(zkPlan.zk, task)).toEqual(['attempts', 'ready']);
  });

  it('run in a sandbox with their inputs when allowInline is on', async () => {
    const functions = new FunctionRegistry().register('constant', (ctx) => ctx.params[0]);
    const zkPlan = await env.zkPlan({ functions });
    const parent = env.root();
    const plan = await zkPlan.createPlan(parent);
    const a = await zkPlan.addTask(plan, call('constant', 6));
    const b = await zkPlan.addTask(plan, call('constant', 7));
    const product = await zkPlan.addTask(
      plan,
      inline((ctx: { task: string }, x: number, y: number) => ({
        product: x * y,
        tagged: new Map([['task', ctx.task]]),
      })),
      [a, b],
      { keepResult: true },
    );
    await zkPlan.markAsReady(plan);
    const pool = zkPlan.startWorkers(parent, {
      allowInline: true,
      backoff: { initial: 10, max: 50 },
    });
    await zkPlan.waitForCompletion(plan, { timeoutMs: 10_000 });
    await pool.stop();
    expect(await zkPlan.getResult(product)).toEqual({
      product: 42,
      tagged: new Map([['task', product]]),
    });
  });

  it('cannot reach process or require, and an endless loop is stopped by the time limit; the worker carries on', async () => {
    const zkPlan = await env.zkPlan();
    const parent = env.root();
    const plan = await zkPlan.createPlan(parent);
    const escape = await zkPlan.addTask(
      plan,
      inline(() => process.pid),
    );
    const load = await zkPlan.addTask(
      plan,
      inline(() => (eval('require') as (id: string) => unknown)('fs')),
    );
    const spin = await zkPlan.addTask(
      plan,
      inline(() => {
        for (;;);
      }),
    );
    const healthy = await zkPlan.addTask(
      plan,
      inline(() => 'still working'),
      [],
      { keepResult: true },
    );
    await zkPlan.markAsReady(plan);
    const failures = new Map<string, Error>();
    zkPlan.on('task:failed', (event) => failures.set(event.task, event.error));
    const pool = zkPlan.startWorkers(parent, {
      allowInline: true,
      inlineTimeoutMs: 200,
      backoff: { initial: 10, max: 2_000 },
    });
    await nextEvent<Payload<'task:completed'>>(
      zkPlan,
      'task:completed',
      (event) => event.task === healthy,
    );
    await waitFor('the 3 tasks (escape, load, spin) to fail', () => failures.size === 3); // tasks are taken in no particular order
    await pool.stop();
    expect(failures.get(escape)?.message).toMatch(/process is not defined/);
    expect(failures.get(load)?.message).toMatch(/Code generation from strings disallowed/);
    expect(failures.get(spin)?.message).toMatch(/timed out/);
    expect(await zkPlan.getResult(healthy)).toBe('still working');
  });
});
