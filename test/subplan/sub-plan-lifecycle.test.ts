/**
 * A sub-plan task's child over its life, over the in-memory ZooKeeper: the spec of a schedule by
 * name; a child deleted after it was made (never made again: the task fails for good); a path
 * another plan holds; a skipped result task; deleting the parent deletes the child; a rerun of the
 * parent from the sub-plan task makes a new child.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  FunctionRegistry,
  PlanFailedError,
  TaskSkippedError,
  skip,
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

function proc(server: MemoryZooKeeper, gate?: Promise<void>): MemoryProcess {
  const functions = new FunctionRegistry()
    .register('load', async (ctx: TaskContext<[number]>) => {
      await gate;
      return ctx.params[0] * 10;
    })
    .register('maybe', (ctx: TaskContext<[number]>) =>
      ctx.params[0] > 0 ? ctx.params[0] : skip('nothing to load'),
    );
  const made = memoryProcess(server, 'worker', functions);
  open.push(made);
  return made;
}

const LOAD: PlanSpec = { tasks: { load: { fn: 'load', params: [{ $param: 'day' }] } } };

function childOf(plan: string, task: string, parent = PARENT): string {
  return `${parent}/${plan.split('/').pop()}~${task.split('/').pop()}`;
}

async function until(condition: () => Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 2_000; i++) {
    if (await condition()) return;
    await pause(5);
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe("a sub-plan task's child", () => {
  it("runs a schedule's spec by name, the sub-plan's params over the schedule's", async () => {
    const server = new MemoryZooKeeper();
    const { zkPlan } = proc(server);
    await zkPlan.schedules('/schedules').put({
      name: 'daily-load',
      cron: '0 0 2 * * *',
      spec: LOAD,
      planParent: '/scheduled',
      params: { day: 0 },
      paused: true,
    });
    const plan = await zkPlan.createPlan(PARENT);
    const task = await zkPlan.addTask(
      plan,
      subPlan({ schedule: 'daily-load', params: { day: 5 }, result: 'load', checkEveryMs: 10 }),
      [],
      { keepResult: true },
    );
    await zkPlan.markAsReady(plan);
    zkPlan.startWorkers(PARENT, { count: 1, backoff: FAST_BACKOFF });
    await zkPlan.waitForCompletion(plan, { timeoutMs: 10_000 });
    expect(await zkPlan.getResult(task)).toBe(50);
  });

  it('is never made again once made: deleted before the task saw it complete, the task fails for good', async () => {
    const server = new MemoryZooKeeper();
    let release = (): void => undefined;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const { zkPlan } = proc(server, gate);
    const plan = await zkPlan.createPlan(PARENT);
    const task = await zkPlan.addTask(
      plan,
      subPlan({ spec: LOAD, params: { day: 1 }, result: 'load', checkEveryMs: 10 }),
    );
    await zkPlan.markAsReady(plan);
    zkPlan.startWorkers(PARENT, { count: 2, backoff: FAST_BACKOFF });
    const child = childOf(plan, task);
    await until(async () => (await zkPlan.zk.exists(`${child}/ready`)) !== undefined, 'the child');
    await zkPlan.plans.delete(child);
    release();
    await expect(zkPlan.waitForCompletion(plan, { timeoutMs: 10_000 })).rejects.toThrow(
      PlanFailedError,
    );
    const failure = (await zkPlan.plans.status(plan)).failed[0]?.failure;
    expect(failure?.code).toBe('SUB_PLAN_FAILED');
    expect(failure?.message).toContain(`its child plan ${child} was deleted`);
    expect(await zkPlan.zk.exists(child)).toBeUndefined();
  });

  it('fails for good when its path is held by a plan it did not make', async () => {
    const server = new MemoryZooKeeper();
    const { zkPlan } = proc(server);
    const plan = await zkPlan.createPlan(PARENT);
    const task = await zkPlan.addTask(
      plan,
      subPlan({ spec: LOAD, params: { day: 1 }, checkEveryMs: 10 }),
    );
    // Another tool made a node at the child's path.
    await zkPlan.zk.create(childOf(plan, task), null, 'persistent');
    await zkPlan.markAsReady(plan);
    zkPlan.startWorkers(PARENT, { count: 1, backoff: FAST_BACKOFF });
    await expect(zkPlan.waitForCompletion(plan, { timeoutMs: 10_000 })).rejects.toThrow(
      PlanFailedError,
    );
    expect((await zkPlan.plans.status(plan)).failed[0]?.failure?.message).toContain('is taken by');
  });

  it('skips the task when the result task skipped', async () => {
    const server = new MemoryZooKeeper();
    const { zkPlan } = proc(server);
    const plan = await zkPlan.createPlan(PARENT);
    const task = await zkPlan.addTask(
      plan,
      subPlan({
        spec: { tasks: { maybe: { fn: 'maybe', params: [0] } } },
        result: 'maybe',
        checkEveryMs: 10,
      }),
      [],
      { keepResult: true },
    );
    await zkPlan.markAsReady(plan);
    zkPlan.startWorkers(PARENT, { count: 1, backoff: FAST_BACKOFF });
    await zkPlan.waitForCompletion(plan, { timeoutMs: 10_000 });
    const skipped = await zkPlan.getResult(task).catch((error: unknown) => error);
    expect(skipped).toBeInstanceOf(TaskSkippedError);
    expect((skipped as TaskSkippedError).reason).toContain('"maybe" was skipped: nothing to load');
  });

  it('goes with its parent: deleting the parent deletes the child, and a rerun from the task makes a new one', async () => {
    const server = new MemoryZooKeeper();
    const { zkPlan } = proc(server);
    const { plan, tasks } = await zkPlan.submitPlan(PARENT, {
      tasks: {
        load: {
          fn: 'zk-plan:sub-plan',
          params: [{ spec: LOAD, params: { day: 3 }, result: 'load', checkEveryMs: 10 }],
        },
      },
    });
    zkPlan.startWorkers(PARENT, { count: 1, backoff: FAST_BACKOFF });
    await zkPlan.waitForCompletion(plan, { timeoutMs: 10_000 });
    const child = childOf(plan, tasks['load'] as string);
    expect((await zkPlan.plans.status(child)).state).toBe('completed');
    const rerun = await zkPlan.snapshots.rerun(plan, { from: 'load' });
    await zkPlan.waitForCompletion(rerun.plan, { timeoutMs: 10_000 });
    const rerunTask = await zkPlan.plans.taskOfKey(rerun.plan, 'load');
    expect(await zkPlan.getResult(rerunTask)).toBe(30);
    const rerunChild = childOf(rerun.plan, rerunTask);
    expect(rerunChild).not.toBe(child);
    expect((await zkPlan.plans.status(rerunChild)).subPlanOf).toBe(rerunTask);
    await zkPlan.plans.delete(plan);
    expect(await zkPlan.zk.exists(child)).toBeUndefined();
    expect(await zkPlan.zk.exists(rerunChild)).toBeDefined();
  });
});
