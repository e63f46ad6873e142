/**
 * Dependent tasks (waitForPlan, DolphinScheduler's DEPENDENT) over the in-memory ZooKeeper: a task
 * that completes once another plan completed, holding no worker while it waits, and fails for good
 * (at once, not retried) when that plan fails or is cancelled; one on a schedule's tick that has
 * not fired yet. `explainTask` says what it waits for.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { FunctionRegistry, call, waitForPlan } from '../../src/index.js';
import { DependencyFailedError } from '../../src/errors/dependency-errors.js';
import { InvalidArgumentError } from '../../src/errors/usage-errors.js';
import { MemoryZooKeeper } from '../../src/testing/index.js';
import { FAST_BACKOFF, memoryProcess, pause, type MemoryProcess } from '../support/memory-plan.js';
import {
  PLANS,
  PULSE,
  SCHEDULES,
  T0,
  schedulerProcess,
  tickFunctions,
} from '../schedule/schedule-harness.js';

const open: MemoryProcess[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map(({ zkPlan }) => zkPlan.close()));
});

/** A process whose `gate` task holds until `release`, `boom` fails, and `after` reports on its input. */
function gatedProcess(server: MemoryZooKeeper): {
  proc: MemoryProcess;
  release: () => void;
} {
  let release = (): void => undefined;
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  const functions = new FunctionRegistry()
    .register('gate', async () => {
      await gate;
      return 'upstream done';
    })
    .register('boom', async () => {
      await gate;
      throw new Error('the source is down');
    })
    .register(
      'after',
      (_ctx, dependency: { plan: string; state: string }) => `after ${dependency.state}`,
    );
  const proc = memoryProcess(server, 'worker', functions);
  open.push(proc);
  return { proc, release };
}

async function until(condition: () => Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 2_000; i++) {
    if (await condition()) return;
    await pause(5);
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('a dependent task (waitForPlan)', () => {
  it('completes once the other plan completed, holding no worker while it waits, and says what it waits for', async () => {
    const server = new MemoryZooKeeper();
    const { proc, release } = gatedProcess(server);
    const { zkPlan } = proc;
    const upstream = await zkPlan.createPlan('/upstream');
    await zkPlan.addTask(upstream, call('gate'));
    await zkPlan.markAsReady(upstream);
    const downstream = await zkPlan.createPlan('/plans', { maxAttempts: 1 });
    const wait = await zkPlan.addTask(
      downstream,
      waitForPlan({ plan: upstream, checkEveryMs: 20 }),
      [],
      { key: 'upstream-done' },
    );
    const report = await zkPlan.addTask(downstream, call('after'), [wait], { keepResult: true });
    await zkPlan.markAsReady(downstream);
    // One loop for the dependent's plans: it checks, says "not yet", and is free again.
    zkPlan.startWorkers('/plans', { count: 1, backoff: FAST_BACKOFF });
    let checks = 0;
    zkPlan.on('task:waiting', () => (checks += 1));
    await until(async () => checks >= 2, 'two checks');
    const why = await zkPlan.explain.task(wait);
    expect(why.code).toBe('WAITING_FOR_CONDITION');
    expect(why.message).toContain(`it waits: plan ${upstream} is running (0/1 tasks done)`);
    // The upstream plan runs on its own loop; the dependent then completes.
    zkPlan.startWorkers('/upstream', { count: 1, backoff: FAST_BACKOFF });
    release();
    await zkPlan.waitForCompletion(downstream, { timeoutMs: 10_000 });
    expect(await zkPlan.getResult(report)).toBe('after completed');
  });

  it.each([
    ['fails', 'boom', `failed (failed: task-`],
    ['is cancelled', 'gate', 'was cancelled'],
  ])('fails for good at once, not retried, when the other plan %s', async (_what, fn, reason) => {
    const server = new MemoryZooKeeper();
    const { proc, release } = gatedProcess(server);
    const { zkPlan } = proc;
    const upstream = await zkPlan.createPlan('/upstream', { maxAttempts: 1 });
    await zkPlan.addTask(upstream, call(fn));
    await zkPlan.markAsReady(upstream);
    const downstream = await zkPlan.createPlan('/plans', { maxAttempts: 5 });
    const wait = await zkPlan.addTask(
      downstream,
      waitForPlan({ plan: upstream, checkEveryMs: 20 }),
    );
    await zkPlan.markAsReady(downstream);
    zkPlan.startWorkers('/plans', { count: 1, backoff: FAST_BACKOFF });
    zkPlan.startWorkers('/upstream', { count: 1, backoff: FAST_BACKOFF });
    if (fn === 'gate') await zkPlan.control.cancel(upstream);
    release();
    const failed = await zkPlan.waitForCompletion(downstream, { timeoutMs: 10_000 }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failed).toBeDefined();
    const status = await zkPlan.plans.status(downstream);
    expect(status.state).toBe('failed');
    const [failure] = status.failed;
    expect(failure?.task).toBe(wait);
    expect(failure?.failure?.code).toBe('DEPENDENCY_FAILED');
    expect(failure?.failure?.attempts).toBe(1);
    expect(failure?.failure?.message).toContain(reason);
  });

  it("waits for a schedule's tick that has not fired yet, then completes with its run", async () => {
    const server = new MemoryZooKeeper();
    const scheduler = schedulerProcess(server, 'scheduler');
    open.push(scheduler);
    await scheduler.schedules.put(PULSE);
    const runner = memoryProcess(server, 'runner', tickFunctions());
    open.push(runner);
    runner.zkPlan.startWorkers(PLANS, { count: 2, backoff: FAST_BACKOFF, retention: false });
    const downstream = await runner.zkPlan.createPlan('/downstream', { maxAttempts: 1 });
    const wait = await runner.zkPlan.addTask(
      downstream,
      waitForPlan({ schedule: 'pulse', schedules: SCHEDULES, at: T0 + 2_500, checkEveryMs: 20 }),
      [],
      { keepResult: true },
    );
    await runner.zkPlan.markAsReady(downstream);
    runner.zkPlan.startWorkers('/downstream', { count: 1, backoff: FAST_BACKOFF });
    await until(
      async () => (await runner.zkPlan.explain.task(wait)).code === 'WAITING_FOR_CONDITION',
      'the dependent to wait',
    );
    expect((await runner.zkPlan.explain.task(wait)).message).toContain(
      `schedule "pulse"'s run of ${new Date(T0 + 2_000).toISOString()} has not been made yet`,
    );
    for (let second = 1; second <= 3; second++) {
      scheduler.clock.now = T0 + second * 1_000 + 20;
      await scheduler.scheduler.pass();
    }
    await runner.zkPlan.waitForCompletion(downstream, { timeoutMs: 10_000 });
    expect(await runner.zkPlan.getResult(wait)).toEqual({
      plan: `${PLANS}/pulse@20261125T020002.000Z`,
      state: 'completed',
      tick: new Date(T0 + 2_000).toISOString(),
    });
  });

  it('refuses a malformed dependency when the task is added, naming it', async () => {
    const server = new MemoryZooKeeper();
    const { proc } = gatedProcess(server);
    const plan = await proc.zkPlan.createPlan('/plans');
    expect(() => waitForPlan({ plan: 'relative/path' })).toThrow(InvalidArgumentError);
    expect(() =>
      waitForPlan({ schedule: 'nightly', at: 'yesterday' } as Parameters<typeof waitForPlan>[0]),
    ).toThrow(/expected a moment/);
    await expect(
      proc.zkPlan.addTask(plan, call('zk-plan:wait-for-plan', { plan: '/p', when: 1 })),
    ).rejects.toThrow(/unknown field of a dependency/);
    expect(new DependencyFailedError('/plans/plan-1/task-1', 'plan /x failed').code).toBe(
      'DEPENDENCY_FAILED',
    );
  });

  it("in a spec: a schedule's run the day before the moment a param binds, refused when malformed", async () => {
    const server = new MemoryZooKeeper();
    const { proc } = gatedProcess(server);
    const spec = {
      tasks: {
        'yesterday-loaded': {
          fn: 'zk-plan:wait-for-plan',
          params: [{ schedule: 'nightly-load', at: { $param: 'firedAt' }, offsetMs: -86_400_000 }],
        },
        report: { fn: 'after', inputs: ['yesterday-loaded'] },
      },
    };
    const submitted = await proc.zkPlan.submitPlan('/plans', spec, {
      params: { firedAt: '2026-11-27T02:30:00.000Z' },
    });
    const view = await proc.zkPlan.plans.describe(submitted.plan);
    const waiting = view.tasks.find((task) => task.key === 'yesterday-loaded');
    expect(waiting?.params).toEqual([
      { schedule: 'nightly-load', at: '2026-11-27T02:30:00.000Z', offsetMs: -86_400_000 },
    ]);
    await expect(
      proc.zkPlan.submitPlan('/plans', {
        tasks: { bad: { fn: 'zk-plan:wait-for-plan', params: [{ schedule: 'x', at: 'soon' }] } },
      }),
    ).rejects.toThrow(/its dependency is invalid/);
  });
});
