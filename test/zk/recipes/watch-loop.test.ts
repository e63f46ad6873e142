import { describe, expect, it, vi } from 'vitest';
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

  it('spaces reads by what the last read took when told so: changes during the gap cost one read', async () => {
    // Fake timers and clock: the read's 20 ms and the gaps pass only when the test says.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    try {
      const server = new MemoryZooKeeper();
      const zk = server.connect();
      await zk.create('/plan');
      const told: number[] = [];
      let reads = 0;
      const following = followWithWatches(
        zk,
        async (watcher) => {
          reads++;
          await new Promise((resolve) => setTimeout(resolve, 20)); // a slow read
          const { children } = await zk.getChildren('/plan', watcher);
          return children.length >= 5 ? { done: true, value: children.length } : { done: false };
        },
        {
          stop: new AbortController().signal,
          retryPauseMs: 1_000,
          minIntervalMs: (lastReadMs) => {
            told.push(lastReadMs);
            return 4 * lastReadMs;
          },
        },
      );
      await vi.advanceTimersByTimeAsync(25); // the first read is done: its 80 ms gap runs
      expect(reads).toBe(1);
      for (const name of ['a', 'b', 'c', 'd', 'e']) {
        await zk.create(`/plan/${name}`);
        await vi.advanceTimersByTimeAsync(10); // within the gap, each change after the last
      }
      expect(reads).toBe(1);
      await vi.advanceTimersByTimeAsync(100);
      await expect(following).resolves.toBe(5);
      expect(reads).toBe(2); // five changes in the gap, one read after it
      expect(told).toEqual([20]);
    } finally {
      vi.useRealTimers();
    }
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
