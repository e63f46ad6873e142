/**
 * Review: where the in-memory ensemble's followers (and frozen clients) differ from a real one.
 *
 * 1. A write that *fails* on a real ensemble is still a transaction: the leader proposes an error
 *    txn with its own zxid, and the follower answers only once it has applied it, so everything
 *    committed before it is visible to the session that got the error (NODE_EXISTS, BAD_VERSION,
 *    NO_NODE, NOT_EMPTY). MemoryZooKeeper.perform throws before `commit`, so the writer's follower
 *    does not catch up: a session gets NODE_EXISTS and then reads that the node is absent. One
 *    consequence in src: JobStore.ensureLease (createIfAbsent, then read) throws MalformedNodeError
 *    "deleted right after it was created" for a lease node that exists.
 * 2. freeze() models a deaf process, not a stopped one: a write issued while "frozen" reaches the
 *    server and lands (a SIGSTOPped process sends nothing). Timers of a frozen process in the plan
 *    simulation keep sending claims and heartbeats.
 */
import { describe, expect, it } from 'vitest';
import { JobStore } from '../../src/jobs/job-store.js';
import { MemoryZooKeeper } from '../../src/testing/index.js';

const flush = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('MemoryZooKeeper followers', () => {
  it('a session that got NODE_EXISTS reads the node (its server applied the error txn, after the create)', async () => {
    const server = new MemoryZooKeeper({ followers: 1 });
    const onFollower = server.connect({ name: 'f' });
    const onLeader = server.connect({ name: 'l' });
    expect([server.serverOf(onFollower.session.id), server.serverOf(onLeader.session.id)]).toEqual([
      1, 0,
    ]);
    await onLeader.create('/x');
    await expect(onFollower.create('/x')).rejects.toMatchObject({ code: 'NODE_EXISTS' });
    expect(await onFollower.exists('/x')).toBeDefined();
  });

  it('a session that got BAD_VERSION reads a version at least the one that refused it', async () => {
    const server = new MemoryZooKeeper({ followers: 1 });
    const onFollower = server.connect({ name: 'f' });
    const onLeader = server.connect({ name: 'l' });
    await onLeader.create('/y');
    server.catchUp();
    await onLeader.setData('/y', Buffer.from('1'), 0);
    await expect(onFollower.setData('/y', Buffer.from('stale'), 0)).rejects.toMatchObject({
      code: 'BAD_VERSION',
    });
    expect((await onFollower.exists('/y'))?.version).toBe(1);
  });

  it('JobStore.ensureLease on a lagging follower returns the lease node another worker made', async () => {
    const server = new MemoryZooKeeper({ followers: 1 });
    const onFollower = server.connect({ name: 'f' });
    const onLeader = server.connect({ name: 'l' });
    await new JobStore(onLeader, '/jobs').ensureLease('job', 'item-1', { fence: onLeader.session });
    const lease = new JobStore(onFollower, '/jobs').ensureLease('job', 'item-1', {
      fence: onFollower.session,
    });
    await expect(lease).resolves.toMatchObject({ record: { released: true } });
  });
});

describe('MemoryZkClient.freeze', () => {
  it('a frozen process sends nothing: a write it issues while frozen does not land before it wakes', async () => {
    const server = new MemoryZooKeeper();
    const zk = server.connect({ name: 'z' });
    zk.freeze();
    void zk.create('/written-while-frozen').catch(() => undefined);
    await flush();
    expect(server.exists('/written-while-frozen')).toBe(false);
    zk.thaw();
  });
});
