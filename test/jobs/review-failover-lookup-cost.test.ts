/**
 * Review: the failover lookup (job-worker.ts failOverTaken -> JobRunStore.interruptedRuns) lists the
 * job's whole run history (up to keepRuns = 10 000 names) once per item taken, serially, inside the
 * worker's pass (the pass that also renews its leases, and whose next run waits for this one). A
 * worker that takes N items of one dead holder lists the same children N times, and reads the same
 * record N times, where one listing and one read per (job, previous holder) would do.
 */
import { describe, expect, it, vi } from 'vitest';
import type { JobContext } from '../../src/jobs/job-context.js';
import { jobNodes } from '../../src/zk/layout.js';
import { JOBS, TIMING, World, sleep, type Proc } from './support/job-harness.js';

const block = (ctx: JobContext): Promise<void> =>
  new Promise((resolve) => ctx.signal.addEventListener('abort', () => resolve(), { once: true }));

async function rounds(world: World, procs: readonly Proc[], count = 2): Promise<void> {
  for (let i = 0; i < count; i++) {
    for (const proc of procs) await proc.worker.pass();
    for (const proc of procs) await proc.manager.pass();
    for (const proc of procs) await proc.worker.pass();
    world.advance(100);
    await sleep(20);
  }
}

describe('review: the failover lookup of a pass that takes many items of one dead holder', () => {
  it('lists the run history once per (job, holder), not once per item', async () => {
    const world = new World();
    const items = Array.from({ length: 50 }, (_, index) => `i${String(index).padStart(2, '0')}`);
    const h = world.spawn('h', { poll: block });
    await world.jobs.define({
      name: 'mail',
      fn: 'poll',
      workPool: { items },
      mode: { everyMs: 3_600_000 },
    });
    await rounds(world, [h]);
    expect(h.worker.heldItems()['mail']).toHaveLength(50);
    await world.jobs.trigger('mail');
    await rounds(world, [h], 1);
    await sleep(50);
    expect((await world.jobs.runs('mail')).runs).toHaveLength(1); // h's run of the 50 items
    h.zk.crash();
    h.zk.expireSessionOnServer();
    const t = world.spawn('t', { poll: block });
    await t.worker.pass();
    await t.manager.pass();
    world.advance(TIMING.leaseMs + TIMING.driftMs + 10); // h's leases have lapsed
    const runsPath = jobNodes(JOBS, 'mail').runs;
    const listings = vi.spyOn(t.zk, 'getChildren');
    await t.worker.pass(); // takes the 50 items of h, then looks up h's interrupted run
    try {
      expect(t.worker.heldItems()['mail']).toHaveLength(50);
      const ofRuns = listings.mock.calls.filter(([path]) => path === runsPath).length;
      expect(ofRuns, 'listings of the run history in one pass').toBeLessThanOrEqual(1);
    } finally {
      listings.mockRestore();
      await t.worker.stop();
    }
  });
});
