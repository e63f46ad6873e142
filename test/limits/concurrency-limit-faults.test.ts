/**
 * Concurrency limits under the faults that once broke them (issue 19, defects 1, 2 and 5), over
 * the in-memory ZooKeeper: a release whose reply is lost and is sent again after the slot's name
 * was taken by another worker (through the next session, or the same one), a take whose reply is
 * lost and is sent again through the next session, and a limit lowered while tasks run.
 * integ/limit-faults.integ.test.ts does the first two on a real server through a proxy.
 */
import { describe, expect, it } from 'vitest';
import {
  ConcurrencyLimits,
  type Acquired,
  type SlotLease,
} from '../../src/limits/concurrency-limits.js';
import type { SlotRecord } from '../../src/limits/limit-record.js';
import { ManualScheduler, MemoryZooKeeper, type MemoryZkClient } from '../../src/testing/index.js';

const PARENT = '/plans';
const SLOTS = `${PARENT}/zk-plan-limits/k`;
const flush = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

function record(task: string): SlotRecord {
  return {
    task: `${PARENT}/plan-0000000001/${task}`,
    workerId: task,
    at: new Date('2026-11-26T00:00:00Z'),
  };
}

/** A worker's view of the limits: `draw` (in [0, 1)) picks the slot it tries first, `draw × limit`. */
function limitsOf(zk: MemoryZkClient, draw = 0): ConcurrencyLimits {
  return new ConcurrencyLimits(zk, () => draw);
}

async function held(zk: MemoryZkClient, task: string, draw = 0): Promise<SlotLease> {
  const acquired = await limitsOf(zk, draw).acquire(PARENT, 'k', record(task), zk.session);
  if (acquired.kind !== 'held') throw new Error(`${task}: expected a slot, got ${acquired.kind}`);
  return acquired.lease;
}

function world(limit: number): {
  server: MemoryZooKeeper;
  clients: (name: string) => MemoryZkClient;
  ready: Promise<void>;
} {
  const server = new MemoryZooKeeper();
  const admin = server.connect({ name: 'admin' });
  return {
    server,
    clients: (name) => server.connect({ name }),
    ready: new ConcurrencyLimits(admin).setLimit(PARENT, 'k', limit),
  };
}

describe('a release sent again after the slot was taken by another worker (defect 1)', () => {
  it.each([
    ['through the next session (the first session expired while cut off)', true],
    ['through the same session (a reconnect within the session timeout)', false],
  ])(
    '%s: it does not delete the other worker’s slot, and a limit of 1 never runs two',
    async (_label, expireSession) => {
      const { server, clients, ready } = world(1);
      await ready;
      const [a, b, c] = [clients('a'), clients('b'), clients('c')];
      const leaseA = await held(a, 'one');
      a.loseNextReply((op, path) => op === 'delete' && path === `${SLOTS}/slot-0`, {
        expireSession,
        reconnect: false,
      });
      const releasing = leaseA.release();
      await flush();
      expect(server.exists(`${SLOTS}/slot-0`)).toBe(false); // A's delete landed; its reply did not
      await held(b, 'two'); // B takes the freed name while A is cut off
      a.reconnect();
      await releasing;
      expect(server.stat(`${SLOTS}/slot-0`)?.ephemeralOwner).toBe(b.sessionId);
      expect((await limitsOf(c).acquire(PARENT, 'k', record('three'), c.session)).kind).toBe(
        'full',
      );
    },
  );
});

describe('a take sent again through the next session (defect 2)', () => {
  it('is refused: no slot is left held by the new session, and the key is not blocked', async () => {
    const { server, clients, ready } = world(1);
    await ready;
    const [a, b] = [clients('a'), clients('b')];
    const session = a.session;
    a.loseNextReply((op, path) => op === 'create' && path === `${SLOTS}/slot-0`, {
      expireSession: true,
      reconnect: false,
    });
    const acquiring = limitsOf(a)
      .acquire(PARENT, 'k', record('one'), session)
      .then(
        (acquired: Acquired) => acquired,
        (error: unknown) => error,
      );
    await flush();
    a.reconnect();
    expect(await acquiring).toMatchObject({ code: 'SESSION_EXPIRED' });
    await flush();
    expect(a.isCurrent(session)).toBe(false);
    expect(server.exists(`${SLOTS}/slot-0`)).toBe(false);
    await held(b, 'two');
  });

  it('a take whose reply was lost in the same session is recognised as this run’s, after a sync, even on a follower that has not applied it', async () => {
    const server = new MemoryZooKeeper({ followers: 1 });
    const admin = server.connect({ name: 'admin' }); // on the follower
    server.connect({ name: 'spare' });
    await new ConcurrencyLimits(admin).setLimit(PARENT, 'k', 1);
    const a = server.connect({ name: 'a' }); // on the follower again
    expect(server.serverOf(a.session.id)).toBe(1);
    a.loseNextReply((op, path) => op === 'create' && path === `${SLOTS}/slot-0`);
    const acquired = await limitsOf(a).acquire(PARENT, 'k', record('one'), a.session);
    expect(acquired.kind).toBe('held');
    expect(server.stat(`${SLOTS}/slot-0`)?.ephemeralOwner).toBe(a.sessionId);
  });
});

describe('a lowered limit (defect 5)', () => {
  it('no new task starts while as many slots as the new limit are held, counting those above it', async () => {
    const { clients, ready, server } = world(3);
    await ready;
    const [b, c, d] = [clients('b'), clients('c'), clients('d')];
    const leaseB = await held(b, 'one', 0.4); // slot-1 of 3
    const leaseC = await held(c, 'two', 0.7); // slot-2 of 3
    await new ConcurrencyLimits(server.connect()).setLimit(PARENT, 'k', 1);
    expect((await limitsOf(d).acquire(PARENT, 'k', record('three'), d.session)).kind).toBe('full');
    await leaseB.release();
    expect((await limitsOf(d).acquire(PARENT, 'k', record('three'), d.session)).kind).toBe('full'); // slot-2 still runs
    await leaseC.release();
    expect((await limitsOf(d).acquire(PARENT, 'k', record('three'), d.session)).kind).toBe('held');
  });

  it('of two workers that each saw one place left beside a slot above the limit, only the first to create runs', async () => {
    const scheduler = new ManualScheduler();
    const server = new MemoryZooKeeper({ scheduler });
    const admin = server.connect({ name: 'admin' });
    const [c, e, f] = ['c', 'e', 'f'].map((name) => server.connect({ name })) as [
      MemoryZkClient,
      MemoryZkClient,
      MemoryZkClient,
    ];
    const setting = new ConcurrencyLimits(admin).setLimit(PARENT, 'k', 3);
    await scheduler.drain();
    await setting;
    const taking = limitsOf(c, 0.7).acquire(PARENT, 'k', record('running'), c.session);
    await scheduler.drain();
    expect((await taking).kind).toBe('held');
    const lowering = new ConcurrencyLimits(admin).setLimit(PARENT, 'k', 2);
    await scheduler.drain();
    await lowering;
    // slot-2 runs above the new limit of 2: one place is left. E and F both read that much, then both create.
    const byE = limitsOf(e, 0).acquire(PARENT, 'k', record('e'), e.session);
    const byF = limitsOf(f, 0.6).acquire(PARENT, 'k', record('f'), f.session);
    for (const client of ['e', 'e', 'f', 'f', 'e', 'f']) {
      await flush();
      scheduler.step(client);
    }
    await scheduler.drain();
    expect([(await byE).kind, (await byF).kind]).toEqual(['held', 'full']);
    expect(server.children(SLOTS)).toEqual(['slot-0', 'slot-2']);
  });
});
