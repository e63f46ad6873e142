/**
 * Review: the job worker emits job:run (and job:log, job:misfire) from inside the runner's loop
 * (run-journal.ts start/ended -> job-service.ts events.emit), with a plain EventEmitter.emit. A
 * listener that throws makes `journal.start` reject, then runOnce, runDue and JobRunner.run: the
 * runner's loop promise rejects with no handler (an unhandled rejection, which ends a Node 20
 * process by default), and the job never runs again on that worker while it keeps holding the
 * items. The plan worker guards the same case (worker-loop.ts emitSafely: "a listener that throws
 * is reported once as worker:error, and never ends the loop"; docs/guide/plans-and-workers.md).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { FunctionRegistry } from '../../src/index.js';
import { MemoryZooKeeper } from '../../src/testing/index.js';
import { memoryProcess, type MemoryProcess } from '../support/memory-plan.js';

const JOBS = '/jobs';
const open: MemoryProcess[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map(({ zkPlan }) => zkPlan.close()));
});

describe('review: a job:run listener that throws', () => {
  it('never ends the runner: the next trigger runs the job again, and nothing is left unhandled', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown): void => void unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const server = new MemoryZooKeeper();
      let calls = 0;
      const functions = new FunctionRegistry().registerJob('poll', () => {
        calls += 1;
      });
      const worker = memoryProcess(server, 'worker', functions);
      open.push(worker);
      let thrown = false;
      worker.zkPlan.on('job:run', () => {
        if (!thrown) {
          thrown = true;
          throw new Error('a bug in a listener');
        }
      });
      worker.zkPlan.on('job:error', () => undefined);
      const handle = worker.zkPlan.startJobWorker(JOBS, { leaseMs: 600, pollMs: 100 });
      const admin = memoryProcess(server, 'admin');
      open.push(admin);
      const jobs = admin.zkPlan.jobs(JOBS);
      await jobs.define({
        name: 'mail',
        fn: 'poll',
        workPool: { items: ['a'] },
        mode: { everyMs: 60_000 },
      });
      await expect.poll(() => handle.held()['mail']?.length ?? 0, { timeout: 5_000 }).toBe(1);
      await jobs.trigger('mail'); // its job:run 'started' listener throws
      await new Promise((resolve) => setTimeout(resolve, 300));
      const before = calls;
      await jobs.trigger('mail');
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(handle.held()['mail']).toEqual(['a']); // still held
      expect(calls, 'runs after the second trigger').toBeGreaterThan(before);
      expect(unhandled.map(String), 'unhandled rejections').toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });
});
