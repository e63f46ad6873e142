/**
 * Plan control on a real ZooKeeper server: priorities, pause/resume/cancel through the API and the
 * `zk-plan pause|resume|cancel|workers` commands, and the live worker registry.
 */
import { describe, expect, it } from 'vitest';
import { FunctionRegistry, PlanCancelledError, call, type TaskContext } from '../src/index.js';
import { runCli, type CliRun } from './support/run-cli.js';
import { useZooKeeper } from './support/zk-test-env.js';

const env = useZooKeeper('plan-control');
const QUICK = { backoff: { initial: 10, max: 50 }, retention: false } as const;

const cli = (args: string[]): Promise<CliRun> => runCli(env.connectString, args);

function recording(order: string[], msOf: (label: string) => number = () => 0): FunctionRegistry {
  return new FunctionRegistry().register('step', async (ctx: TaskContext<unknown[]>) => {
    const label = String(ctx.params[0]);
    order.push(label);
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, msOf(label));
      ctx.signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
    });
    if (ctx.signal.aborted) throw ctx.signal.reason;
    return label;
  });
}

describe('priorities on a real server', () => {
  it('one loop runs 50 runnable tasks of mixed priorities in non-increasing priority order, and a higher plan before a lower one', async () => {
    const order: string[] = [];
    const zkPlan = await env.zkPlan({ functions: recording(order) });
    const parent = env.root();
    const mixed = await zkPlan.createPlan(parent);
    const priorityOf = new Map<string, number>();
    await zkPlan.addTasks(
      mixed,
      Array.from({ length: 50 }, (_, index) => {
        const priority = ((index * 7) % 13) - 6;
        priorityOf.set(`m${index}`, priority);
        return { task: call('step', `m${index}`), options: { priority } };
      }),
    );
    const low = await zkPlan.createPlan(parent, { priority: -1 });
    const high = await zkPlan.createPlan(parent, { priority: 10 });
    await zkPlan.addTasks(
      low,
      Array.from({ length: 5 }, (_, index) => ({ task: call('step', `low${index}`) })),
    );
    await zkPlan.addTasks(
      high,
      Array.from({ length: 5 }, (_, index) => ({ task: call('step', `high${index}`) })),
    );
    await Promise.all([mixed, low, high].map((plan) => zkPlan.markAsReady(plan)));
    zkPlan.startWorkers(parent, { ...QUICK, count: 1 });
    await Promise.all(
      [mixed, low, high].map((plan) => zkPlan.waitForCompletion(plan, { timeoutMs: 30_000 })),
    );
    // high (10) first, then the mixed plan by its tasks' own priorities (6…-6; a plan's own 0 does not apply to them), low (-1) among them.
    const rank = (label: string): number =>
      label.startsWith('high')
        ? 10
        : label.startsWith('low')
          ? -1
          : (priorityOf.get(label) as number);
    const ranks = order.map(rank);
    expect(ranks).toHaveLength(60);
    expect(ranks).toEqual([...ranks].sort((a, b) => b - a));
  });
});

describe('pause, resume and cancel on a real server', () => {
  it('pause holds new starts, resume completes the plan; cancel aborts and deletes, and waitForCompletion rejects with PLAN_CANCELLED', async () => {
    const starts: string[] = [];
    const functions = recording(starts, (label) => (label.startsWith('slow') ? 60_000 : 20));
    const zkPlan = await env.zkPlan({ functions });
    const parent = env.root();
    zkPlan.startWorkers(parent, { ...QUICK, count: 3, drainTimeoutMs: 100 });

    const paused = await zkPlan.createPlan(parent);
    const tasks = await zkPlan.addTasks(
      paused,
      Array.from({ length: 40 }, (_, index) => ({ task: call('step', `t${index}`) })),
    );
    await zkPlan.markAsReady(paused);
    await expect.poll(() => starts.length, { timeout: 10_000 }).toBeGreaterThanOrEqual(3);
    const { running } = await zkPlan.control.pause(paused);
    const startedBefore = starts.length;
    await expect
      .poll(async () => (await zkPlan.plans.status(paused)).state, { timeout: 5_000 })
      .toBe('paused');
    await new Promise((resolve) => setTimeout(resolve, 500)); // a negative check: 25 task lengths in which nothing new may start
    const held = new Set(running.map((task) => `t${tasks.indexOf(task)}`));
    expect(starts.slice(startedBefore).filter((label) => !held.has(label))).toEqual([]);
    await zkPlan.control.resume(paused);
    await zkPlan.waitForCompletion(paused, { timeoutMs: 30_000 });
    expect(new Set(starts.filter((label) => label.startsWith('t'))).size).toBe(40);

    const doomed = await zkPlan.createPlan(parent);
    await zkPlan.addTasks(
      doomed,
      Array.from({ length: 3 }, (_, index) => ({ task: call('step', `slow${index}`) })),
    );
    await zkPlan.markAsReady(doomed);
    await expect
      .poll(() => starts.filter((label) => label.startsWith('slow')).length, { timeout: 10_000 })
      .toBe(3);
    const waiting = zkPlan
      .waitForCompletion(doomed, { timeoutMs: 30_000 })
      .catch((error: unknown) => error);
    await zkPlan.control.cancel(doomed, { reason: 'warehouse down' });
    expect(await waiting).toBeInstanceOf(PlanCancelledError);
    expect(await waiting).toMatchObject({ code: 'PLAN_CANCELLED', reason: 'warehouse down' });
    // Its tasks are deleted; its history says each was cancelled (running, or given back and ready to run again), none done.
    expect(await zkPlan.plans.status(doomed)).toMatchObject({
      state: 'cancelled',
      counts: { total: 3, done: 0, remaining: 3, cancelled: 3 },
    });
    expect(await zkPlan.planCompleted(doomed)).toBe(true); // no task-* node left
  });

  it('zk-plan pause, resume, cancel and workers', async () => {
    const starts: string[] = [];
    const zkPlan = await env.zkPlan({ functions: recording(starts, () => 50) });
    const parent = env.root();
    const pool = zkPlan.startWorkers(parent, { ...QUICK, count: 2, workerId: 'cli-pool' });
    const plan = await zkPlan.createPlan(parent);
    await zkPlan.addTasks(
      plan,
      Array.from({ length: 20 }, (_, index) => ({ task: call('step', `t${index}`) })),
    );

    const paused = await cli(['pause', plan, '--json']);
    expect(paused.code).toBe(0);
    expect(JSON.parse(paused.stdout)).toEqual({ plan, state: 'paused', running: [] });
    await zkPlan.markAsReady(plan);
    await new Promise((resolve) => setTimeout(resolve, 300)); // a negative check: a paused plan starts nothing
    expect(starts).toEqual([]);
    expect((await cli(['show', plan, '--json'])).stdout).toContain('"state": "paused"');

    const workers = await cli(['workers', parent, '--json']);
    expect(workers.code).toBe(0);
    expect(JSON.parse(workers.stdout)).toEqual([
      expect.objectContaining({ id: 'cli-pool', loops: 2, functions: ['step'], pid: process.pid }),
    ]);
    expect((await cli(['workers', parent])).stdout).toMatch(/cli-pool .* 0\/2 /);

    expect((await cli(['resume', plan])).code).toBe(0);
    await zkPlan.waitForCompletion(plan, { timeoutMs: 30_000 });
    expect(starts).toHaveLength(20);
    // A completed plan refuses both, and stays completed.
    const late = await cli(['cancel', plan, '--reason', 'too late']);
    expect(late.code).toBe(8);
    expect(late.stderr).toBe(
      `zk-plan: plan ${plan} has already completed: there is nothing left to cancel [PLAN_FINISHED]\n`,
    );
    expect((await cli(['pause', plan])).code).toBe(8);
    expect((await zkPlan.plans.status(plan)).state).toBe('completed');

    const second = await zkPlan.createPlan(parent);
    await zkPlan.addTask(second, call('step', 'never'));
    const cancelled = await cli(['cancel', second, '--reason', 'started by mistake']);
    expect(cancelled).toMatchObject({ code: 0, stdout: `cancelled ${second}\n` });
    const resumed = await cli(['resume', second]);
    expect(resumed.code).toBe(6);
    expect(resumed.stderr).toContain('PLAN_CANCELLED');
    expect((await cli(['wait', second, '--no-progress'])).code).toBe(6);
    await pool.stop();
    expect(JSON.parse((await cli(['workers', parent, '--json'])).stdout)).toEqual([]);
  });
});
