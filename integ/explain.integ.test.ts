/**
 * explainTask and explainPlan on a real ZooKeeper server: every explanation code, each set up for
 * real (a paused plan, a full concurrency limit, an owner whose session is not a live worker's, …).
 */
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import {
  FunctionRegistry,
  PermanentError,
  call,
  type ExplanationCode,
  type TaskContext,
  type ZkPlan,
} from '../src/index.js';
import { useZooKeeper } from './support/zk-test-env.js';

const env = useZooKeeper('explain');
const QUICK = { backoff: { initial: 10, max: 50 }, retention: false } as const;

/** `block` waits until its signal aborts; `fail` throws PermanentError; `flaky` throws a plain error; `ok` returns 1. */
function functions(): FunctionRegistry {
  return new FunctionRegistry()
    .register(
      'block',
      (ctx: TaskContext<unknown[]>) =>
        new Promise((resolve) =>
          ctx.signal.addEventListener('abort', () => resolve(null), { once: true }),
        ),
    )
    .register('fail', () => {
      throw new PermanentError('no such customer');
    })
    .register('flaky', () => {
      throw new Error('warehouse timeout');
    })
    .register('ok', () => 1);
}

async function explained(
  zkPlan: ZkPlan,
  task: string,
  code: ExplanationCode,
  timeoutMs = 10_000,
): Promise<Record<string, unknown>> {
  let last: unknown;
  await expect
    .poll(
      async () => {
        last = await zkPlan.explain.task(task);
        return (last as { code: string }).code;
      },
      { timeout: timeoutMs },
    )
    .toBe(code);
  return last as Record<string, unknown>;
}

describe('explainTask', () => {
  it('PLAN_NOT_READY, PLAN_PAUSED, PLAN_CANCELLED, DONE and NO_WORKER_FOR_FUNCTION (no worker at all)', async () => {
    const zkPlan = await env.zkPlan({ functions: functions() });
    const parent = env.root();
    const plan = await zkPlan.createPlan(parent);
    const task = await zkPlan.addTask(plan, call('ok'), [], { keepResult: true });
    expect(await explained(zkPlan, task, 'PLAN_NOT_READY')).toMatchObject({
      remedy: { api: expect.stringContaining(`markAsReady(${plan})`) },
    });
    await zkPlan.markAsReady(plan);
    expect(await explained(zkPlan, task, 'NO_WORKER_FOR_FUNCTION')).toMatchObject({
      message: `no live worker follows ${parent}`,
    });
    await zkPlan.control.pause(plan);
    await explained(zkPlan, task, 'PLAN_PAUSED');
    const pool = zkPlan.startWorkers(parent, { ...QUICK, count: 1 });
    await zkPlan.control.resume(plan);
    await zkPlan.waitForCompletion(plan, { timeoutMs: 10_000 });
    await explained(zkPlan, task, 'DONE');
    const second = await zkPlan.createPlan(parent);
    const never = await zkPlan.addTask(second, call('block'));
    await zkPlan.control.cancel(second, { reason: 'not needed' });
    expect((await explained(zkPlan, never, 'PLAN_CANCELLED')).message).toContain('not needed');
    await pool.stop();
  });

  it('OWNED, WAITING_FOR_INPUTS, FAILED, BLOCKED, RETRY_BACKOFF and PLAN_FAILED', async () => {
    const zkPlan = await env.zkPlan({ functions: functions() });
    const parent = env.root();
    const pool = zkPlan.startWorkers(parent, {
      ...QUICK,
      count: 2,
      workerId: 'explain-pool',
      drainTimeoutMs: 100,
    });

    const plan = await zkPlan.createPlan(parent, { initialDelayMs: 600_000 });
    const [running, waiting, failed, blocked, retrying] = await zkPlan.addTasks(plan, [
      { task: call('block') },
      { task: call('ok'), args: [0] },
      { task: call('fail') },
      { task: call('ok'), args: [2] },
      { task: call('flaky') },
    ]);
    await zkPlan.markAsReady(plan);
    expect(await explained(zkPlan, running as string, 'OWNED')).toMatchObject({
      details: expect.objectContaining({ workerId: expect.stringContaining('explain-pool/') }),
    });
    expect(await explained(zkPlan, waiting as string, 'WAITING_FOR_INPUTS')).toMatchObject({
      details: { pendingInputs: 1, inputs: [{ task: running, state: 'running' }] },
    });
    expect((await explained(zkPlan, failed as string, 'FAILED')).message).toContain(
      'no such customer',
    );
    await explained(zkPlan, blocked as string, 'BLOCKED');
    expect(await explained(zkPlan, retrying as string, 'RETRY_BACKOFF')).toMatchObject({
      details: { failures: 1, lastError: expect.stringContaining('warehouse timeout') },
    });

    const fast = await zkPlan.createPlan(parent, { failurePolicy: 'failFast' });
    const [, later] = await zkPlan.addTasks(fast, [
      { task: call('fail'), options: { priority: 10 } },
      { task: call('ok'), args: [0] },
    ]);
    await zkPlan.markAsReady(fast);
    await explained(zkPlan, later as string, 'PLAN_FAILED');
    const summary = await zkPlan.explain.plan(plan);
    expect(summary.reasons.map((reason) => reason.code).sort()).toEqual([
      'BLOCKED',
      'FAILED',
      'OWNED',
      'RETRY_BACKOFF',
      'WAITING_FOR_INPUTS',
    ]);
    await pool.stop();
  });

  it('CONCURRENCY_LIMIT, WORKERS_BUSY, RUNNABLE, NO_WORKER_FOR_FUNCTION (a function nobody registers) and OWNER_GONE', async () => {
    const zkPlan = await env.zkPlan({ functions: functions() });
    const parent = env.root();
    await zkPlan.limits(parent).set('warehouse', 0);
    const pool = zkPlan.startWorkers(parent, { ...QUICK, count: 1, drainTimeoutMs: 100 });

    const plan = await zkPlan.createPlan(parent);
    const limited = await zkPlan.addTask(plan, call('ok'), [], { concurrencyKey: 'warehouse' });
    const writer = await env.zkPlan(); // no registry: addTask checks no function name
    const foreign = await writer.addTask(plan, call('nobody-has-this'));
    await zkPlan.markAsReady(plan);
    expect(await explained(zkPlan, limited, 'CONCURRENCY_LIMIT')).toMatchObject({
      details: { key: 'warehouse', limit: 0, holders: [] },
    });
    expect((await explained(zkPlan, foreign, 'NO_WORKER_FOR_FUNCTION')).message).toContain(
      '"nobody-has-this"',
    );

    const busy = await zkPlan.createPlan(parent);
    const [first, second] = await zkPlan.addTasks(busy, [
      { task: call('block'), options: { priority: 5 } },
      { task: call('block') },
    ]);
    await zkPlan.markAsReady(busy);
    await explained(zkPlan, first as string, 'OWNED');
    expect(await explained(zkPlan, second as string, 'WORKERS_BUSY')).toMatchObject({
      details: { loops: 1, busy: 1 },
    });
    await pool.stop();
    // Held back before a free loop starts, so that it does not take one of its tasks (a claim made while
    // pausePlan runs may still start: pausePlan reports it as held).
    await zkPlan.control.pause(busy);
    const idle = zkPlan.startWorkers(parent, {
      ...QUICK,
      count: 1,
      workerId: 'idle',
      drainTimeoutMs: 100,
    });
    const other = await zkPlan.createPlan(parent);
    const waitingTask = await zkPlan.addTask(other, call('ok'));
    await zkPlan.control.pause(other);
    await zkPlan.markAsReady(other);
    await explained(zkPlan, waitingTask, 'PLAN_PAUSED');

    // An owner node of a session that is no live worker's (a worker of another tool, or one whose registry node went).
    const stranger = await env.client();
    const ghost = await zkPlan.createPlan(parent);
    const held = await zkPlan.addTask(ghost, call('ok'));
    await stranger.create(
      `${held}/owner`,
      Buffer.from(
        JSON.stringify({
          json: { workerId: 'elsewhere:1/1', claimedAt: new Date().toISOString() },
          meta: { values: { claimedAt: ['Date'] } },
        }),
      ),
      'ephemeral',
    );
    await zkPlan.markAsReady(ghost);
    expect(await explained(zkPlan, held, 'OWNER_GONE')).toMatchObject({
      details: expect.objectContaining({ session: stranger.session.id }),
    });

    // A free loop and nothing holding the task back: RUNNABLE until the loop takes it (within moments), then OWNED.
    const runnablePlan = await zkPlan.createPlan(parent);
    const free = await zkPlan.addTask(runnablePlan, call('block'));
    await zkPlan.markAsReady(runnablePlan);
    expect(['RUNNABLE', 'OWNED']).toContain((await zkPlan.explain.task(free)).code);
    await explained(zkPlan, free, 'OWNED');

    // The command line says the same, for a task and for a plan.
    const cli = spawnSync(
      process.execPath,
      ['--import', 'tsx', 'src/cli/main.ts', 'why', limited, '--json'],
      {
        env: { ...process.env, ZOOKEEPER_CONNECT: env.connectString },
        encoding: 'utf8',
      },
    );
    expect(cli.status).toBe(0);
    expect(JSON.parse(cli.stdout)).toMatchObject({ task: limited, code: 'CONCURRENCY_LIMIT' });
    const planWhy = spawnSync(
      process.execPath,
      ['--import', 'tsx', 'src/cli/main.ts', 'why', plan],
      {
        env: { ...process.env, ZOOKEEPER_CONNECT: env.connectString },
        encoding: 'utf8',
      },
    );
    expect(planWhy.stdout).toMatch(/CONCURRENCY_LIMIT \(1\)/);
    const limitShown = spawnSync(
      process.execPath,
      ['--import', 'tsx', 'src/cli/main.ts', 'limit', parent, 'warehouse', '--json'],
      {
        env: { ...process.env, ZOOKEEPER_CONNECT: env.connectString },
        encoding: 'utf8',
      },
    );
    expect(JSON.parse(limitShown.stdout)).toEqual({ limit: 0, holders: [] });
    await idle.stop();
  });
});
