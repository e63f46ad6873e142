import { describe, expect, it } from 'vitest';
import { TaskStore } from '../../src/store/task-store.js';
import { encodeValue } from '../../src/serialization/codec.js';
import { MemoryZooKeeper } from '../../src/testing/index.js';

/**
 * A second finisher of a producer (its first owner died while finishing) feeds its dependents
 * again. One of them may already have consumed the input and be half deleted: writing the input
 * again would leave a child that keeps it, and its plan, for ever (found by the simulation).
 */
describe('feeding a dependent again after a crash (refeed)', () => {
  it('does not write an input whose dep is gone, and indexes a dependent that is runnable', async () => {
    const server = new MemoryZooKeeper();
    const zk = server.connect({ name: 'worker' });
    const store = new TaskStore(zk);
    const plan = '/p/plan-0000000000';
    await zk.ensurePath(`${plan}/runnable`);
    const consumed = `${plan}/task-0000000001`; // its input arrived, it ran, and its deletion is under way
    await zk.create(consumed);
    const encoded = encodeValue(42, 'result');
    expect(await store.giveInput(`${consumed}/dep-0000000000`, encoded, {}, true)).toBeUndefined();
    expect(server.children(consumed)).toEqual([]);

    const waiting = `${plan}/task-0000000002`; // still waiting for this very input
    await zk.create(waiting);
    await zk.create(`${waiting}/dep-0000000000`);
    await zk.create(`${waiting}/ready`);
    expect(await store.giveInput(`${waiting}/dep-0000000000`, encoded, {}, true)).toBe(waiting);
    expect(server.children(waiting)).toEqual(['arg-0000000000', 'ready']);

    const fedBefore = `${plan}/task-0000000003`; // fed by the first finisher, whose index entry was lost
    await zk.create(fedBefore);
    await zk.create(`${fedBefore}/arg-0000000000`, encoded);
    await zk.create(`${fedBefore}/ready`);
    expect(await store.giveInput(`${fedBefore}/dep-0000000000`, encoded, {}, true)).toBe(fedBefore);
    await expect.poll(() => server.exists(`${plan}/runnable/task-0000000003`)).toBe(true);
  });

  it('a first feed writes the input as before', async () => {
    const server = new MemoryZooKeeper();
    const zk = server.connect({ name: 'worker' });
    const store = new TaskStore(zk);
    const dependent = '/p/plan-0000000000/task-0000000001';
    await zk.ensurePath(dependent);
    await zk.create(`${dependent}/dep-0000000000`);
    await store.giveInput(`${dependent}/dep-0000000000`, encodeValue(1, 'result'));
    expect(server.children(dependent)).toEqual(['arg-0000000000']);
  });
});
