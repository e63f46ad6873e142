import { describe, expect, it } from 'vitest';
import { ZkError } from '../../../src/errors/zk-error.js';
import { MemoryZooKeeper } from '../../../src/testing/index.js';
import { NATIVE } from '../../../src/zk/native-client.js';
import { followWithWatches } from '../../../src/zk/recipes/watch-loop.js';

const CONNECTION_LOSS = -4; // ZooKeeper's ZCONNECTIONLOSS

const flush = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('followWithWatches', () => {
  it('reads again each time the watch of the last read fires, and resolves the value of the read that is done', async () => {
    const server = new MemoryZooKeeper();
    const zk = server.connect();
    await zk.create('/plan');
    const seen: number[] = [];
    const following = followWithWatches(
      zk,
      async (watcher) => {
        const { children } = await zk.getChildren('/plan', watcher);
        seen.push(children.length);
        return children.length >= 2 ? { done: true, value: children.sort() } : { done: false };
      },
      { stop: new AbortController().signal, retryPauseMs: 1_000 },
    );
    await flush();
    expect(seen).toEqual([0]);
    await zk.create('/plan/a');
    await flush();
    expect(seen).toEqual([0, 1]);
    await zk.create('/plan/b');
    await expect(following).resolves.toEqual(['a', 'b']);
    expect(seen).toEqual([0, 1, 2]);
  });

  it('resolves undefined once stopped, without reading again', async () => {
    const server = new MemoryZooKeeper();
    const zk = server.connect();
    await zk.create('/plan');
    const stop = new AbortController();
    let reads = 0;
    const following = followWithWatches(
      zk,
      async (watcher) => {
        reads++;
        await zk.getChildren('/plan', watcher);
        return { done: false };
      },
      { stop: stop.signal, retryPauseMs: 1_000 },
    );
    await flush();
    stop.abort();
    await expect(following).resolves.toBeUndefined();
    await zk.create('/plan/a');
    await flush();
    expect(reads).toBe(1);
  });

  it('after a connection problem reads again when a new session starts, not only when the pause is over', async () => {
    const server = new MemoryZooKeeper();
    const zk = server.connect();
    await zk.create('/plan');
    let reads = 0;
    const following = followWithWatches(
      zk,
      async (watcher) => {
        reads++;
        if (reads === 1) throw new ZkError('getChildren', CONNECTION_LOSS, '/plan');
        await zk.getChildren('/plan', watcher);
        return { done: true, value: reads };
      },
      { stop: new AbortController().signal, retryPauseMs: 600_000 },
    );
    await flush();
    expect(reads).toBe(1);
    zk.expireSession(); // a new session starts at once
    await expect(following).resolves.toBe(2);
    expect(zk.listenerCount('session:started')).toBe(0);
  });

  it('rejects on an error that is not a connection problem', async () => {
    const zk = new MemoryZooKeeper().connect();
    const failure = new ZkError('getChildren', NATIVE.ZNONODE, '/plan');
    await expect(
      followWithWatches(zk, () => Promise.reject(failure), {
        stop: new AbortController().signal,
        retryPauseMs: 1,
      }),
    ).rejects.toBe(failure);
  });
});
