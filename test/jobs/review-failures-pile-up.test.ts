/**
 * Review: the items' last failures (`<jobs>/zk-plan-job-failures/<job>/<item>`) are deleted only
 * with the job (JobRunStore.remove). Item ids that come and go (the manager prunes their leases
 * for exactly this reason: job-manager.ts pruneLeases, "so that lease nodes do not pile up while
 * items come and go") leave a failure node each, forever; `jobs.runs` then reads every one of them
 * in one unbounded Promise.all (JobRunStore.lastFailures), at each web view poll for up to 50 jobs.
 */
import { describe, expect, it } from 'vitest';
import { JOBS, World, sleep, type Proc } from './support/job-harness.js';

async function rounds(world: World, procs: readonly Proc[], count = 3): Promise<void> {
  for (let i = 0; i < count; i++) {
    for (const proc of procs) await proc.worker.pass();
    for (const proc of procs) await proc.manager.pass();
    for (const proc of procs) await proc.worker.pass();
    world.advance(100);
    await sleep(30);
  }
}

describe('review: last failures of items that left the pool', () => {
  it('do not pile up while item ids come and go', async () => {
    const world = new World();
    const a = world.spawn('a', {
      fail: () => {
        throw new Error('down');
      },
    });
    try {
      await world.jobs.define({
        name: 'j',
        fn: 'fail',
        workPool: { items: ['item-0'] },
        mode: { everyMs: 50 },
        retries: 0,
      });
      await rounds(world, [a]);
      for (let generation = 1; generation <= 6; generation++) {
        await world.jobs.setWorkPool('j', [`item-${generation}`]);
        await rounds(world, [a]);
      }
      expect(world.server.children(`${JOBS}/zk-plan-job-leases/j`)).toEqual(['item-6']); // leases: pruned
      const failures = world.server.children(`${JOBS}/zk-plan-job-failures/j`);
      expect(failures).toContain('item-6');
      expect(failures, 'failure nodes of items no longer in the pool').toEqual(['item-6']);
      expect(Object.keys((await world.jobs.runs('j')).lastFailures)).toEqual(['item-6']);
    } finally {
      await a.worker.stop();
    }
  });
});
