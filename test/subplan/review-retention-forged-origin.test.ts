/**
 * Review 2: retention follows a child's `origin.parentTask` into `exists()` without checking it is a
 * valid path. Anyone can write a plan node: one named like a child (`plan-N~task-M`) whose origin
 * names `//plan-N/task-M` passes parentTaskIn (its names match), and `exists('//plan-N')` is
 * refused by the client (BAD_ARGUMENTS). The sweep throws on it, every time: no finished plan
 * under that parent is ever deleted again.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { FunctionRegistry } from '../../src/index.js';
import { MemoryZooKeeper } from '../../src/testing/index.js';
import { RetentionSweeper } from '../../src/worker/retention.js';
import type { TaskStore } from '../../src/store/task-store.js';
import type { Zk } from '../../src/zk/zk.js';
import { encodeValue } from '../../src/serialization/codec.js';
import { memoryProcess, type MemoryProcess } from '../support/memory-plan.js';

const open: MemoryProcess[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map(({ zkPlan }) => zkPlan.close().catch(() => undefined)));
});

describe('review 2: retention and a forged origin', () => {
  it('a node naming an invalid parent task does not stop the sweep', async () => {
    const server = new MemoryZooKeeper();
    const p = memoryProcess(server, 'p', new FunctionRegistry());
    open.push(p);
    // A finished plan retention should delete (completed: ready, no task).
    const done = await p.zkPlan.createPlan('/children');
    await p.zkPlan.markAsReady(done);
    // Someone's node, named like a child, whose origin passes parentTaskIn.
    const forged = '/children/plan-0000000099~task-0000000001';
    await p.zk.create(
      forged,
      encodeValue({ origin: { parentTask: '//plan-0000000099/task-0000000001' } }, 'forged'),
      'persistent',
    );
    const errors: unknown[] = [];
    const store = (p.zkPlan as unknown as { store: TaskStore }).store;
    const sweeper = new RetentionSweeper(
      p.zk as unknown as Zk,
      store,
      '/children',
      { maxAgeMs: 0, maxCount: 1000, sweepIntervalMs: 60_000 },
      (error) => errors.push(error),
    );
    await new Promise((resolve) => setTimeout(resolve, 5));
    await sweeper.sweep().catch((error: unknown) => errors.push(error));
    expect(errors).toEqual([]); // fails: BAD_ARGUMENTS from exists('//plan-0000000099')
    expect(await p.zk.exists(done)).toBeUndefined(); // fails: the sweep stopped before it
  });
});
