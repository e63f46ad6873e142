/** The token lock (src/zk/recipes/token-lock.ts): a release that fails is tried again while the session lives. */
import { describe, expect, it, vi } from 'vitest';
import { ZkError } from '../../../src/errors/zk-error.js';
import { MemoryZooKeeper } from '../../../src/testing/index.js';
import { TokenLock } from '../../../src/zk/recipes/token-lock.js';

describe('TokenLock', () => {
  it('a release that fails (ZooKeeper out of reach longer than the client waits) is tried again until the lock is gone', async () => {
    const server = new MemoryZooKeeper();
    const zk = server.connect();
    await zk.create('/tick');
    const lock = new TokenLock(zk, '/tick/lock', zk.session, { holder: 'test' });
    expect(await lock.take()).toBe('taken');
    const deleteIfPresent = zk.deleteIfPresent.bind(zk);
    vi.spyOn(zk, 'deleteIfPresent')
      .mockRejectedValueOnce(new ZkError('delete', -4, '/tick/lock'))
      .mockImplementation(deleteIfPresent);
    await expect(lock.release()).rejects.toMatchObject({ code: 'CONNECTION_LOSS' });
    expect(server.exists('/tick/lock')).toBe(true);
    await vi.waitFor(() => expect(server.exists('/tick/lock')).toBe(false), { timeout: 3_000 });
    const other = new TokenLock(zk, '/tick/lock', zk.session);
    expect(await other.take()).toBe('taken');
  });

  it('a take sent again through the next session is refused: no lock is left that nobody knows for its own', async () => {
    const server = new MemoryZooKeeper();
    const zk = server.connect();
    await zk.create('/tick');
    const lock = new TokenLock(zk, '/tick/lock', zk.session);
    zk.loseNextReply((op, path) => op === 'create' && path === '/tick/lock', {
      expireSession: true,
    });
    await expect(lock.take()).rejects.toMatchObject({ code: 'SESSION_EXPIRED' });
    await vi.waitFor(() => expect(zk.state).toBe('connected'));
    expect(server.exists('/tick/lock')).toBe(false);
  });
});
