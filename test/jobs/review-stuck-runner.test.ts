/**
 * Review: the lost wake-up of JobRunner.runOnce, through a real JobWorker over the in-memory
 * ZooKeeper. The job worker holds `b` and `a` (a taken later, so its deadline is later). While the
 * worker is stalled, the manager moves `b` to a new worker `q`. When the runner's tick comes before
 * the worker's deadline timer, the runner's `holding()` drops `b` (overdue) and sets the share to
 * `[a]` synchronously (drop -> shareOut -> setShare -> wake), returns false, and runOnce then calls
 * sleep(Infinity), which replaces the aborted wake-up controller: the wake is lost. `a` is held and
 * renewed from then on, but never run again until something else changes the share.
 */
import { describe, expect, it } from 'vitest';
import type { JobContext } from '../../src/jobs/job-context.js';
import { World, sleep } from './support/job-harness.js';

describe('review: a job worker whose run found an item run out', () => {
  it('keeps running the items it still holds at their ticks', async () => {
    const world = new World();
    const runs: { worker: string; items: string[]; at: number }[] = [];
    const poll = (worker: string) => (ctx: JobContext) => {
      runs.push({ worker, items: ctx.items.map((item) => item.id), at: world.now });
    };
    const p = world.spawn('p', { poll: poll('p') });
    try {
      await world.jobs.define({
        name: 'mail',
        fn: 'poll',
        workPool: { items: ['b'] },
        mode: { everyMs: 100 },
      });
      await p.worker.pass(); // registers
      await p.manager.pass();
      await p.worker.pass(); // p takes b at mono 0: deadline 800
      expect(p.worker.heldItems()).toEqual({ mail: ['b'] });
      world.advance(300);
      await world.jobs.setWorkPool('mail', ['a', 'b']);
      await p.manager.pass();
      await p.worker.pass(); // p takes a at mono 300: deadline 1 100 (b is not renewed yet)
      expect(p.worker.heldItems()).toEqual({ mail: ['a', 'b'] });
      await sleep(150); // a tick of [a, b] runs
      expect(runs.at(-1)).toMatchObject({ worker: 'p', items: ['a', 'b'] });

      // p stalls; meanwhile q joins and the manager moves one item to it.
      const q = world.spawn('q', { poll: poll('q') });
      try {
        await q.worker.pass();
        await p.manager.pass();
        const moved = await world.jobs.assignment('mail');
        expect(moved).toEqual({ p: ['a'], q: ['b'] });
        // p wakes past b's deadline (not a's): its runner's tick comes first.
        world.advance(550);
        await sleep(200);
        expect(p.worker.heldItems()).toEqual({ mail: ['a'] }); // b dropped, by the runner's holding()

        // From now on p holds a and renews it, pass after pass, for two seconds of ticks.
        const before = runs.length;
        for (let step = 0; step < 20; step++) {
          world.advance(100);
          await p.worker.pass();
          await q.worker.pass();
          await sleep(120);
        }
        expect(p.worker.heldItems()).toEqual({ mail: ['a'] });
        const pRunsOfA = runs.slice(before).filter((run) => run.worker === 'p');
        expect(pRunsOfA.length, 'runs of a on p in 20 ticks while p held it').toBeGreaterThan(0);
      } finally {
        await q.worker.stop();
      }
    } finally {
      await p.worker.stop();
    }
  });
});
