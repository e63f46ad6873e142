import { describe, expect, it } from 'vitest';
import { FunctionRegistry, PermanentError, PlanNotFoundError, call } from '../src/index.js';
import { useZooKeeper, waitFor } from './support/zk-test-env.js';

const env = useZooKeeper('plan-view');

describe('describePlan, listPlans, deletePlan', () => {
  it('shows every task with its state and inputs, finished ones from the history', async () => {
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const functions = new FunctionRegistry()
      .register('constant', (ctx) => ctx.params[0])
      .register('slow', async (_ctx, x: number) => {
        await gate;
        return x + 1;
      })
      .register('broken', () => {
        throw new PermanentError('bad row 7');
      })
      .register('sum', (_ctx, ...xs: number[]) => xs.reduce((a, b) => a + b, 0));
    const zkPlan = await env.zkPlan({ functions });
    const parent = env.root();
    const plan = await zkPlan.createPlan(parent, { history: true });
    const [a, b, slow, broken, after, sum] = (await zkPlan.addTasks(plan, [
      { task: call('constant', 1) },
      { task: call('constant', 2) },
      { task: call('slow'), args: [0] },
      { task: call('broken') },
      { task: call('sum'), args: [3] },
      { task: call('sum'), args: [1, 2, 0], options: { keepResult: true } },
    ])) as [string, string, string, string, string, string];
    await zkPlan.markAsReady(plan);
    const pool = zkPlan.startWorkers(parent, { count: 3, backoff: { initial: 10, max: 50 } });
    let view = await waitFor('slow running, a and b done, broken failed', async () => {
      const current = await zkPlan.plans.describe(plan);
      return (
        current.tasks.find((task) => task.task === slow)?.state === 'running' &&
        current.done === 2 &&
        current.status.counts.failed === 1 &&
        current
      );
    });
    const byTask = new Map(view.tasks.map((task) => [task.task, task]));
    expect(byTask.get(a)).toMatchObject({
      state: 'done',
      fn: 'constant',
      params: [1],
      workerId: expect.any(String),
    });
    expect(byTask.get(b)?.state).toBe('done');
    expect(byTask.get(slow)).toMatchObject({
      state: 'running',
      inputs: [a],
      owner: { workerId: expect.any(String) },
    });
    expect(byTask.get(broken)).toMatchObject({
      state: 'failed',
      failure: { message: expect.stringContaining('bad row 7') },
    });
    expect(byTask.get(after)).toMatchObject({
      state: 'blocked',
      inputs: [broken],
      blockedReason: expect.stringContaining(broken),
    });
    expect(byTask.get(sum)).toMatchObject({
      state: 'waiting',
      inputs: [b, slow, a],
      pendingInputs: 1,
      keepResult: true,
    });
    expect(view).toMatchObject({ done: 2, historyKept: true });
    const [summary] = await zkPlan.plans.list(parent);
    expect(summary).toMatchObject({
      plan,
      done: 2,
      status: { state: 'running', counts: { failed: 1, blocked: 1 } },
    });
    release();
    await zkPlan.waitForCompletion(plan, { timeoutMs: 10_000 }).catch(() => undefined); // fails: the broken branch
    view = await zkPlan.plans.describe(plan);
    expect(view.status.state).toBe('failed');
    expect(new Map(view.tasks.map((task) => [task.task, task.state])).get(sum)).toBe('done');
    await pool.stop();
    await zkPlan.plans.delete(plan);
    await expect(zkPlan.plans.describe(plan)).rejects.toBeInstanceOf(PlanNotFoundError);
    await expect(zkPlan.plans.delete(plan)).rejects.toBeInstanceOf(PlanNotFoundError);
  });
});
