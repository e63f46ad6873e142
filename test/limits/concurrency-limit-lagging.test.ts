/**
 * Review: a lowered limit read stale from a lagging follower. `acquire` reads the limit and the
 * slots without a sync; `mayRun` (the czxid-rank post-check) runs only when the slots read are above
 * the limit *read*, and compares with that same stale limit. So a worker whose server has not
 * applied `setLimit(1)` yet starts a task after `setLimit(1)` resolved while another task holds a
 * slot: two run under a limit of 1.
 */
import { describe, expect, it } from 'vitest';
import { ConcurrencyLimits } from '../../src/limits/concurrency-limits.js';
import type { SlotRecord } from '../../src/limits/limit-record.js';
import { MemoryZooKeeper } from '../../src/testing/index.js';

const PARENT = '/plans';
const SLOTS = `${PARENT}/zk-plan-limits/k`;

function record(task: string): SlotRecord {
  return {
    task: `${PARENT}/plan-0000000001/${task}`,
    workerId: task,
    at: new Date('2026-11-26T00:00:00Z'),
  };
}

describe('a lowered limit read from a lagging follower', () => {
  it('no task starts after setLimit(1) resolved while another task holds a slot', async () => {
    const server = new MemoryZooKeeper({ followers: 2 });
    const b = server.connect({ name: 'b' }); // follower 1
    const a = server.connect({ name: 'a' }); // follower 2
    const admin = server.connect({ name: 'admin' }); // leader
    expect([
      server.serverOf(b.session.id),
      server.serverOf(a.session.id),
      server.serverOf(admin.session.id),
    ]).toEqual([1, 2, 0]);

    await new ConcurrencyLimits(admin).setLimit(PARENT, 'k', 3);
    server.catchUp();
    const heldByB = await new ConcurrencyLimits(b, () => 0.4).acquire(
      PARENT,
      'k',
      record('one'),
      b.session,
    );
    expect(heldByB.kind).toBe('held'); // slot-1
    server.catchUp();

    await new ConcurrencyLimits(admin).setLimit(PARENT, 'k', 1); // resolved: the limit is 1 from now on
    // a's server has not applied it yet (a real follower lags by up to ZooKeeper's sync limit).
    const byA = await new ConcurrencyLimits(a, () => 0).acquire(
      PARENT,
      'k',
      record('two'),
      a.session,
    );

    // One slot (b's) is held and the limit is 1: a must find it full.
    expect({ kind: byA.kind, slots: server.children(SLOTS) }).toEqual({
      kind: 'full',
      slots: ['slot-1'],
    });
  });
});
