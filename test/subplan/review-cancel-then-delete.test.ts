/**
 * Review 2: the parent is cancelled, then deleted, while its check makes the child (both calls list
 * the plan's sub-plans before the child's node exists). The check sees the cancel, cancels the
 * child and ends; nobody deletes the child then. It is an orphan (its plan is gone), and retention
 * of the child's parent deletes it at its next sweep (docs/design/sub-plans.md).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { FunctionRegistry, subPlan } from '../../src/index.js';
import { MemoryZooKeeper } from '../../src/testing/index.js';
import { FAST_BACKOFF, memoryProcess, pause, type MemoryProcess } from '../support/memory-plan.js';

const PARENT = '/plans';
const CHILDREN = '/children';
const open: MemoryProcess[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map(({ zkPlan }) => zkPlan.close().catch(() => undefined)));
});

describe('review 2: cancel then delete racing the check that makes the child', () => {
  it('the child left behind is deleted by retention as an orphan', async () => {
    const server = new MemoryZooKeeper();
    const fns = (): FunctionRegistry => new FunctionRegistry().register('load', () => 1);
    const admin = memoryProcess(server, 'admin', fns());
    const worker = memoryProcess(server, 'worker', fns());
    open.push(admin, worker);
    const plan = await admin.zkPlan.createPlan(PARENT);
    const task = await admin.zkPlan.addTask(
      plan,
      subPlan({ spec: { tasks: { load: { fn: 'load' } } }, parent: CHILDREN, checkEveryMs: 10 }),
    );
    await admin.zkPlan.markAsReady(plan);
    const child = `${CHILDREN}/${plan.split('/').pop()}~${task.split('/').pop()}`;
    // The delete's last step (the plan node, control record included) waits for the gate.
    let openGate = (): void => undefined;
    const gate = new Promise<void>((resolve) => (openGate = resolve));
    let atGate = (): void => undefined;
    const reachedGate = new Promise<void>((resolve) => (atGate = resolve));
    const adminZk = admin.zk as unknown as {
      deleteRecursive: (path: string, ...rest: unknown[]) => Promise<unknown>;
    };
    const deleteRecursive = adminZk.deleteRecursive.bind(adminZk);
    adminZk.deleteRecursive = async (path: string, ...rest: unknown[]) => {
      if (path === plan) {
        atGate();
        await gate;
      }
      return deleteRecursive(path, ...rest);
    };
    // Cancel, then delete (up to its last step), right before the check creates the child's node.
    const zk = worker.zk as unknown as {
      create: (path: string, ...rest: unknown[]) => Promise<unknown>;
    };
    const create = zk.create.bind(zk);
    let raced = false;
    let deleting: Promise<void> | undefined;
    zk.create = async (path: string, ...rest: unknown[]) => {
      if (path === child && !raced) {
        raced = true;
        await admin.zkPlan.control.cancel(plan);
        deleting = admin.zkPlan.plans.delete(plan);
        await reachedGate;
      }
      return create(path, ...rest);
    };
    const failed: string[] = [];
    worker.zkPlan.on('task:failed', (e) => failed.push(e.error.name));
    worker.zkPlan.startWorkers(PARENT, { count: 1, backoff: FAST_BACKOFF, retention: false });
    for (let i = 0; i < 200 && failed.length === 0; i++) await pause(5);
    expect(failed).toEqual(['PlanCancelledError']); // the check has ended
    openGate();
    await deleting;
    await pause(50);
    expect(await admin.zk.exists(plan)).toBeUndefined();
    // Left by the race; retention of the children's parent takes it as an orphan.
    admin.zkPlan.startWorkers(CHILDREN, {
      count: 1,
      backoff: FAST_BACKOFF,
      retention: { maxAgeMs: 60_000, sweepIntervalMs: 20 },
    });
    for (let i = 0; i < 400 && (await admin.zk.exists(child)) !== undefined; i++) await pause(5);
    expect(await admin.zk.exists(child)).toBeUndefined();
  });
});
