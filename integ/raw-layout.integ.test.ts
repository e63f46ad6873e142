import superjson from 'superjson';
import { describe, expect, it } from 'vitest';
import { FunctionRegistry } from '../src/index.js';
import { type ZkClient } from '../src/testing/index.js';
import { useZooKeeper } from './support/zk-test-env.js';

/**
 * Another program, knowing only the znode layout and superjson, writes a plan node by node
 * (no zk-plan API); zk-plan workers must run it with the right results.
 */
const env = useZooKeeper('raw-layout');

const text = (value: unknown) => Buffer.from(superjson.stringify(value), 'utf8');

async function writeTask(
  zk: ZkClient,
  plan: string,
  definition: unknown,
  inputs: string[],
): Promise<string> {
  const task = await zk.create(`${plan}/task-`, text(definition), 'persistent-sequential');
  for (const input of inputs) {
    const dep = await zk.create(`${task}/dep-`, null, 'persistent-sequential');
    await zk.create(`${input}/prov-`, text(dep), 'persistent-sequential');
  }
  await zk.create(`${task}/ready`);
  return task;
}

describe('a plan written directly in the zk-plan layout', () => {
  it('is executed by the workers with the right results', async () => {
    const functions = new FunctionRegistry()
      .register('load', (ctx) => ctx.params[0])
      .register('scale', (ctx, values: number[]) =>
        values.map((value) => value * (ctx.params[0] as number)),
      )
      .register('concat', (_ctx, ...lists: number[][]) => lists.flat())
      .register('summary', (_ctx, values: number[]) => ({
        count: values.length,
        total: values.reduce((a, b) => a + b, 0),
        at: new Date(0),
      }));
    const raw = await env.client();
    const parent = env.root();
    await raw.ensurePath(parent);
    const plan = await raw.create(`${parent}/plan-`, null, 'persistent-sequential');
    const load1 = await writeTask(raw, plan, { fn: 'load', params: [[1, 2, 3]] }, []);
    const load2 = await writeTask(raw, plan, { fn: 'load', params: [[10, 20]] }, []);
    const scaled1 = await writeTask(raw, plan, { fn: 'scale', params: [2] }, [load1]);
    const scaled2 = await writeTask(raw, plan, { fn: 'scale', params: [3] }, [load2]);
    const all = await writeTask(raw, plan, { fn: 'concat', params: [] }, [
      scaled2,
      scaled1,
      scaled2,
    ]);
    const summary = await writeTask(raw, plan, { fn: 'summary', params: [], keepResult: true }, [
      all,
    ]);
    await raw.create(`${plan}/ready`);

    const zkPlan = await env.zkPlan({ functions });
    const pool = zkPlan.startWorkers(parent, { count: 3, backoff: { initial: 10, max: 100 } });
    await zkPlan.waitForCompletion(plan, { timeoutMs: 20_000 });
    await pool.stop();

    expect(await zkPlan.getResult(summary)).toEqual({
      count: 7,
      total: 30 + 60 + 12 + 30 + 60,
      at: new Date(0),
    });
    expect((await raw.getChildren(plan)).children.sort()).toEqual([
      'ready',
      `result-${summary.slice(-10)}`,
    ]);
  });

  it('accepts a task value without params, and plain superjson written by hand', async () => {
    const functions = new FunctionRegistry().register(
      'hello',
      (ctx) => `hello ${ctx.params.length}`,
    );
    const raw = await env.client();
    const parent = env.root();
    await raw.ensurePath(parent);
    const plan = await raw.create(`${parent}/plan-`, null, 'persistent-sequential');
    const task = await raw.create(
      `${plan}/task-`,
      Buffer.from('{"json":{"fn":"hello","keepResult":true}}'),
      'persistent-sequential',
    );
    await raw.create(`${task}/ready`);
    await raw.create(`${plan}/ready`);
    const zkPlan = await env.zkPlan({ functions });
    const pool = zkPlan.startWorkers(parent, { backoff: { initial: 10 } });
    await zkPlan.waitForCompletion(plan, { timeoutMs: 10_000 });
    await pool.stop();
    expect(await zkPlan.getResult(task)).toBe('hello 0');
  });
});
