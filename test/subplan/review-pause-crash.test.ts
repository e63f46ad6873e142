/**
 * Review: a pause of the parent that listed its sub-plans before the check wrote its record is
 * carried to the child only by that check's step 5 (the control read once the child is ready). The
 * checking worker dies after the child's `ready`, before it pauses the child: the child runs to the
 * end while its parent is paused (no later check runs while the parent is paused).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { FunctionRegistry, subPlan } from '../../src/index.js';
import { MemoryZooKeeper } from '../../src/testing/index.js';
import { CrashScheduler, Victim } from '../support/crash-scheduler.js';
import { FAST_BACKOFF, memoryProcess, pause, type MemoryProcess } from '../support/memory-plan.js';

const PARENT = '/plans';
const CHILDREN = '/children';
const open: MemoryProcess[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map(({ zkPlan }) => zkPlan.close().catch(() => undefined)));
});

describe('review: pause racing the check, then a crash', () => {
  it('the child of a paused parent does not run on', async () => {
    const scheduler = new CrashScheduler();
    const server = new MemoryZooKeeper({ scheduler });
    const runs: number[] = [];
    const fns = (): FunctionRegistry =>
      new FunctionRegistry().register('load', () => {
        runs.push(1);
        return 1;
      });
    const admin = memoryProcess(server, 'admin', fns());
    open.push(admin);
    const plan = await admin.zkPlan.createPlan(PARENT);
    const task = await admin.zkPlan.addTask(
      plan,
      subPlan({ spec: { tasks: { load: { fn: 'load' } } }, parent: CHILDREN, checkEveryMs: 10 }),
    );
    await admin.zkPlan.markAsReady(plan);
    const child = `${CHILDREN}/${plan.split('/').pop()}~${task.split('/').pop()}`;
    const record = `${plan}/sub-plans/${task.split('/').pop()}`;
    const childRunner = memoryProcess(server, 'children', fns());
    open.push(childRunner);
    childRunner.zkPlan.startWorkers(CHILDREN, { count: 1, backoff: FAST_BACKOFF });
    const doomed = memoryProcess(server, 'doomed', fns());
    // The pause lands (and lists no sub-plan) right before the check writes its record.
    const zk = doomed.zk as unknown as {
      create: (path: string, ...rest: unknown[]) => Promise<unknown>;
    };
    const create = zk.create.bind(zk);
    let paused = false;
    zk.create = async (path: string, ...rest: unknown[]) => {
      if (path === record && !paused) {
        paused = true;
        await admin.zkPlan.control.pause(plan);
      }
      return create(path, ...rest);
    };
    // It dies before its first write after the child's `ready` (the child's pause).
    let readied = false;
    const victim = new Victim(server, doomed.zk, 0, (op, path) => {
      if (op === 'create' && path === `${child}/ready`) {
        readied = true;
        return false;
      }
      return readied;
    });
    scheduler.victim = victim;
    doomed.zkPlan.startWorkers(PARENT, { count: 1, backoff: FAST_BACKOFF });
    await victim.crashed;
    scheduler.victim = undefined;
    await pause(300);
    expect((await admin.zkPlan.plans.status(plan)).control?.state).toBe('paused');
    // The parent is paused; its child should be too, not run to the end.
    expect(runs).toEqual([]);
    expect((await admin.zkPlan.plans.status(child)).state).not.toBe('completed');
  });
});
