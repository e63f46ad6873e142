/**
 * Review: child paths collide across parents, and the parent's control/delete follow a record
 * whose child is another plan's (a collision, or a forged record): listSubPlans checks only the name.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { FunctionRegistry, subPlan, type TaskContext } from '../../src/index.js';
import { MemoryZooKeeper } from '../../src/testing/index.js';
import { encodeValue } from '../../src/serialization/codec.js';
import { FAST_BACKOFF, memoryProcess, pause, type MemoryProcess } from '../support/memory-plan.js';

const open: MemoryProcess[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map(({ zkPlan }) => zkPlan.close()));
});

function fns(gate: Promise<void>): FunctionRegistry {
  return new FunctionRegistry().register('load', async (ctx: TaskContext<[number]>) => {
    await gate;
    return ctx.params[0] * 10;
  });
}

async function until(condition: () => Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 2_000; i++) {
    if (await condition()) return;
    await pause(5);
  }
  throw new Error(`timed out waiting for ${what}`);
}

const SPEC = { tasks: { load: { fn: 'load', params: [1] } } };

describe('review: sub-plan child paths across parents', () => {
  it('deleting plan B (whose sub-plan task lost the shared path) must not delete plan A’s child', async () => {
    const server = new MemoryZooKeeper();
    let release = (): void => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const p = memoryProcess(server, 'w', fns(gate));
    open.push(p);
    const { zkPlan } = p;
    const a = await zkPlan.createPlan('/a');
    const taskA = await zkPlan.addTask(
      a,
      subPlan({ spec: SPEC, parent: '/c', result: 'load', checkEveryMs: 10 }),
      [],
      { keepResult: true },
    );
    await zkPlan.markAsReady(a);
    const b = await zkPlan.createPlan('/b');
    const taskB = await zkPlan.addTask(
      b,
      subPlan({ spec: SPEC, parent: '/c', result: 'load', checkEveryMs: 10 }),
      [],
      { keepResult: true },
    );
    await zkPlan.markAsReady(b);
    expect(a.split('/').pop()).toBe(b.split('/').pop());
    expect(taskA.split('/').pop()).toBe(taskB.split('/').pop());
    const child = `/c/${a.split('/').pop()}~${taskA.split('/').pop()}`;
    zkPlan.startWorkers('/a', { count: 1, backoff: FAST_BACKOFF });
    zkPlan.startWorkers('/c', { count: 1, backoff: FAST_BACKOFF });
    await until(async () => (await p.zk.exists(`${child}/ready`)) !== undefined, 'A’s child');
    zkPlan.startWorkers('/b', { count: 1, backoff: FAST_BACKOFF });
    await until(async () => (await zkPlan.plans.status(b)).state === 'failed', 'B to fail');
    // B's task failed: "path taken". B's record still names A's child.
    await zkPlan.plans.delete(b);
    // A's child is gone: A's task fails "deleted before this task saw it complete".
    const left = await p.zk.exists(child);
    release();
    expect(left).not.toBeUndefined();
  });

  it('a forged record in plan B’s sub-plans makes cancel(B) cancel another plan’s child', async () => {
    const server = new MemoryZooKeeper();
    let release = (): void => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const p = memoryProcess(server, 'w', fns(gate));
    open.push(p);
    const { zkPlan, zk } = p;
    const a = await zkPlan.createPlan('/a');
    const taskA = await zkPlan.addTask(
      a,
      subPlan({ spec: SPEC, result: 'load', checkEveryMs: 10 }),
      [],
      { keepResult: true },
    );
    await zkPlan.markAsReady(a);
    const child = `/a/${a.split('/').pop()}~${taskA.split('/').pop()}`;
    zkPlan.startWorkers('/a', { count: 1, backoff: FAST_BACKOFF });
    await until(async () => (await zk.exists(`${child}/ready`)) !== undefined, 'A’s child');
    // Plan B under /b has the same name; anyone who can write B's nodes writes one record.
    const b = await zkPlan.createPlan('/b');
    expect(b.split('/').pop()).toBe(a.split('/').pop());
    await zk.create(`${b}/sub-plans`, null);
    const record = `${b}/sub-plans/${taskA.split('/').pop()}`;
    await zk.create(record, encodeValue({ child, created: true }, 'forged', record));
    await zkPlan.control.cancel(b);
    const state = (await zkPlan.plans.status(child)).control?.state;
    release();
    expect(state).toBeUndefined(); // got 'cancelled': plan A's child, cancelled by cancel(B)
  });
});
