/**
 * Sub-plan tasks (`subPlan`, a spec's `fn: zk-plan:sub-plan`; DolphinScheduler's SUB_PROCESS) over
 * the in-memory ZooKeeper: the child runs with params from the task's inputs and the task completes
 * with the child task's result; sub-plans nest three deep on one worker loop (no worker waits on a
 * child); a child's failure fails the task for good, naming the child and its failed task, and
 * retryFailed of the parent retries the child; pause, resume and cancel of the parent reach the
 * child; bad definitions are refused where they are written.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  FunctionRegistry,
  InvalidArgumentError,
  PlanFailedError,
  PlanSpecError,
  SubPlanFailedError,
  call,
  subPlan,
  type PlanSpec,
  type TaskContext,
} from '../../src/index.js';
import { MemoryZooKeeper } from '../../src/testing/index.js';
import { FAST_BACKOFF, memoryProcess, pause, type MemoryProcess } from '../support/memory-plan.js';

const PARENT = '/plans';
const open: MemoryProcess[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map(({ zkPlan }) => zkPlan.close()));
});

interface Switches {
  brokenDay?: number;
  gate?: Promise<void>;
}

function functions(switches: Switches = {}): FunctionRegistry {
  return new FunctionRegistry()
    .register('days', (ctx: TaskContext<[number]>) =>
      Array.from({ length: ctx.params[0] }, (_, day) => day + 1),
    )
    .register('load', async (ctx: TaskContext<[number]>) => {
      await switches.gate;
      if (ctx.params[0] === switches.brokenDay) throw new Error(`day ${ctx.params[0]} is broken`);
      return ctx.params[0] * 10;
    })
    .register('count', (_ctx, days: number[]) => days.length)
    .register('sum', (_ctx, ...parts: number[]) => parts.reduce((total, part) => total + part, 0))
    .register('report', (_ctx, total: number) => `total ${total}`);
}

/** The child: load one day, keyed `load`; its result is the sub-plan's. */
const DAY_SPEC: PlanSpec = {
  name: 'one-day',
  tasks: { load: { fn: 'load', params: [{ $param: 'day' }] } },
};

function proc(server: MemoryZooKeeper, name = 'worker', switches: Switches = {}): MemoryProcess {
  const made = memoryProcess(server, name, functions(switches));
  open.push(made);
  return made;
}

async function until(condition: () => Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 2_000; i++) {
    if (await condition()) return;
    await pause(5);
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('a sub-plan task', () => {
  it('runs its spec as a child plan with params from its inputs and completes with the named task’s result', async () => {
    const server = new MemoryZooKeeper();
    const { zkPlan, zk } = proc(server);
    const { plan, tasks } = await zkPlan.submitPlan(PARENT, {
      tasks: {
        days: { fn: 'days', params: [3] },
        count: { fn: 'count', inputs: ['days'] },
        'load-day': {
          fn: 'zk-plan:sub-plan',
          params: [{ spec: DAY_SPEC, inputs: ['day'], result: 'load', checkEveryMs: 10 }],
          inputs: ['count'],
        },
        report: { fn: 'report', inputs: ['load-day'] },
      },
    });
    zkPlan.startWorkers(PARENT, { count: 2, backoff: FAST_BACKOFF });
    await zkPlan.waitForCompletion(plan, { timeoutMs: 10_000 });
    expect(await zkPlan.getResult(tasks['report'] as string)).toBe('total 30');
    expect(await zkPlan.getResult(tasks['load-day'] as string)).toBe(30);
    const child = `${PARENT}/${plan.split('/').pop()}~${(tasks['load-day'] as string).split('/').pop()}`;
    const status = await zkPlan.plans.status(child);
    expect(status.state).toBe('completed');
    expect(status.name).toBe('one-day');
    expect(status.subPlanOf).toBe(tasks['load-day']);
    // The parent's record names the child, and the view of the parent task links to it.
    const view = await zkPlan.plans.describe(plan);
    expect(view.tasks.find((task) => task.key === 'load-day')?.subPlan).toBe(child);
    expect((await zk.getChildren(`${plan}/sub-plans`)).children).toHaveLength(1);
  });

  it('nests three deep on a single worker loop: no loop waits on a child', async () => {
    const server = new MemoryZooKeeper();
    const { zkPlan } = proc(server);
    const level3: PlanSpec = { tasks: { load: { fn: 'load', params: [{ $param: 'day' }] } } };
    const level2: PlanSpec = {
      tasks: {
        inner: {
          fn: 'zk-plan:sub-plan',
          params: [
            { spec: level3, params: { day: { $param: 'day' } }, result: 'load', checkEveryMs: 10 },
          ],
        },
      },
    };
    // { $param: 'day' } in level2's sub-plan params is level2's own param, filled when level2 is made.
    const top = await zkPlan.createPlan(PARENT);
    const task = await zkPlan.addTask(
      top,
      subPlan({ spec: level2, params: { day: 7 }, result: 'inner', checkEveryMs: 10 }),
      [],
      { keepResult: true },
    );
    await zkPlan.markAsReady(top);
    zkPlan.startWorkers(PARENT, { count: 1, backoff: FAST_BACKOFF });
    await zkPlan.waitForCompletion(top, { timeoutMs: 10_000 });
    expect(await zkPlan.getResult(task)).toBe(70);
    const plans = (await zkPlan.plans.list(PARENT)).map((summary) => summary.plan);
    expect(plans).toHaveLength(3);
    expect(plans.filter((plan) => plan.split('~').length === 3)).toHaveLength(1);
  });

  it('fails for good when its child fails, naming the child and its failed task; retryFailed of the parent retries the child', async () => {
    const server = new MemoryZooKeeper();
    const switches: Switches = { brokenDay: 2 };
    const { zkPlan } = proc(server, 'worker', switches);
    const plan = await zkPlan.createPlan(PARENT, { maxAttempts: 3 });
    const task = await zkPlan.addTask(
      plan,
      subPlan({
        spec: { options: { maxAttempts: 1 }, tasks: DAY_SPEC.tasks },
        params: { day: 2 },
        result: 'load',
        checkEveryMs: 10,
      }),
      [],
      { keepResult: true, key: 'load-2' },
    );
    await zkPlan.markAsReady(plan);
    zkPlan.startWorkers(PARENT, { count: 2, backoff: FAST_BACKOFF });
    const failed = await zkPlan.waitForCompletion(plan, { timeoutMs: 10_000 }).catch((e) => e);
    expect(failed).toBeInstanceOf(PlanFailedError);
    const status = await zkPlan.plans.status(plan);
    expect(status.failed).toHaveLength(1);
    const failure = status.failed[0]?.failure;
    expect(failure?.code).toBe('SUB_PLAN_FAILED');
    expect(failure?.retryable).toBe(false);
    expect(failure?.attempts).toBe(1); // for good at once, whatever maxAttempts says
    expect(failure?.message).toContain(`~${task.split('/').pop()} failed (failed: load)`);
    // Fixed, then retried from the parent: the child's failed task runs again, and the task completes.
    switches.brokenDay = undefined;
    const retried = await zkPlan.control.retryFailed(plan);
    expect(retried).toEqual([task]);
    await zkPlan.waitForCompletion(plan, { timeoutMs: 10_000 });
    expect(await zkPlan.getResult(task)).toBe(20);
  });

  it('follows its parent plan: pause, resume and cancel reach the child', async () => {
    const server = new MemoryZooKeeper();
    let open = (): void => undefined;
    const gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    const { zkPlan } = proc(server, 'worker', { gate });
    const plan = await zkPlan.createPlan(PARENT);
    const task = await zkPlan.addTask(
      plan,
      subPlan({
        spec: {
          tasks: {
            load: { fn: 'load', params: [1] },
            again: { fn: 'load', params: [2], inputs: ['load'] },
          },
        },
        checkEveryMs: 10,
      }),
    );
    await zkPlan.markAsReady(plan);
    zkPlan.startWorkers(PARENT, { count: 2, backoff: FAST_BACKOFF });
    const child = `${PARENT}/${plan.split('/').pop()}~${task.split('/').pop()}`;
    await until(
      async () => (await zkPlan.plans.status(child).catch(() => undefined))?.state === 'running',
      'the child to run',
    );
    await zkPlan.control.pause(plan);
    expect((await zkPlan.plans.status(child)).control?.state).toBe('paused');
    await zkPlan.control.resume(plan);
    expect((await zkPlan.plans.status(child)).control).toBeUndefined();
    await zkPlan.control.cancel(plan, { reason: 'not needed' });
    const { control } = await zkPlan.plans.status(child);
    expect(control?.state).toBe('cancelled');
    expect(control?.state === 'cancelled' ? control.reason : undefined).toContain(plan);
    open();
    expect((await zkPlan.plans.status(child)).state).toBe('cancelled');
  });

  it('is refused where it is written when its definition is bad', async () => {
    const server = new MemoryZooKeeper();
    const { zkPlan } = proc(server);
    const plan = await zkPlan.createPlan(PARENT);
    expect(() => subPlan({ spec: DAY_SPEC, schedule: 'nightly' } as never)).toThrow(
      InvalidArgumentError,
    );
    expect(() => subPlan({ spec: DAY_SPEC, checkEveryMs: 1.5 })).toThrow(/checkEveryMs/);
    expect(() => subPlan({ spec: DAY_SPEC, colour: 'red' } as never)).toThrow(/unknown field/);
    // Two inputs, one name.
    const a = await zkPlan.addTask(plan, call('count'), []);
    await expect(
      zkPlan.addTask(plan, subPlan({ spec: DAY_SPEC, inputs: ['day'] }), [a, a]),
    ).rejects.toThrow(/2 input\(s\) and names 1/);
    await expect(
      zkPlan.submitPlan(PARENT, {
        tasks: {
          sub: { fn: 'zk-plan:sub-plan', params: [{ spec: DAY_SPEC, inputs: ['day'] }] },
        },
      }),
    ).rejects.toThrow(PlanSpecError);
    // Review (defect 7): a sub-plan's definition is its first param, where a map puts each item.
    await expect(
      zkPlan.addTask(plan, call('days', 3), [], { map: { fn: 'zk-plan:sub-plan' } }),
    ).rejects.toThrow(/cannot be a map's or reduce's function/);
    expect(() => new FunctionRegistry().register('zk-plan:sub-plan', () => 1)).toThrow(
      /built-in function of sub-plan tasks/,
    );
  });

  it('fails for good when the child spec is invalid, naming the task and what to fix', async () => {
    const server = new MemoryZooKeeper();
    const { zkPlan } = proc(server);
    const plan = await zkPlan.createPlan(PARENT, { maxAttempts: 4 });
    const task = await zkPlan.addTask(
      plan,
      subPlan({ spec: DAY_SPEC, checkEveryMs: 10 }), // its { $param: 'day' } has no value
    );
    await zkPlan.markAsReady(plan);
    zkPlan.startWorkers(PARENT, { count: 1, backoff: FAST_BACKOFF });
    await expect(zkPlan.waitForCompletion(plan, { timeoutMs: 10_000 })).rejects.toThrow(
      PlanFailedError,
    );
    const failure = (await zkPlan.plans.status(plan)).failed[0]?.failure;
    expect(failure?.code).toBe(new SubPlanFailedError(task, 'x').code);
    expect(failure?.message).toMatch(/child spec is invalid: .*day/);
    expect(failure?.attempts).toBe(1);
  });
});
