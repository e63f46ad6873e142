/**
 * Review: `final` of a failed run (job:run, the alert webhook's body: "No retry left before the
 * job's next tick") is computed as `attempt > retries` (run-journal.ts). A retry whose doubling
 * pause ends after the next tick is replaced by the tick (job-runner.ts run(), "a retry still
 * waiting for its time is replaced by it"), so a job that fails at every run, with a period shorter
 * than its retry pauses, never reaches attempt retries + 1: no failed run is ever `final`, and a
 * listener that alerts on final failures (the documented use) stays silent while the job fails
 * forever.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { FunctionRegistry, type ZkPlanEvents } from '../../src/index.js';
import { MemoryZooKeeper } from '../../src/testing/index.js';
import { memoryProcess, type MemoryProcess } from '../support/memory-plan.js';

const JOBS = '/jobs';
const open: MemoryProcess[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map(({ zkPlan }) => zkPlan.close()));
});

describe('review: a job that fails at every run', () => {
  it('has failed runs reported final (no retry left before the next tick)', async () => {
    const server = new MemoryZooKeeper();
    const functions = new FunctionRegistry().registerJob('poll', () => {
      throw new Error('mailbox down');
    });
    const worker = memoryProcess(server, 'worker', functions);
    open.push(worker);
    const ended: ZkPlanEvents['job:run'][0][] = [];
    worker.zkPlan.on('job:run', (event) => {
      if (event.state === 'ended') ended.push(event);
    });
    worker.zkPlan.startJobWorker(JOBS, { leaseMs: 600, pollMs: 100, restartDelayMs: 150 });
    const admin = memoryProcess(server, 'admin');
    open.push(admin);
    await admin.zkPlan.jobs(JOBS).define({
      name: 'mail',
      fn: 'poll',
      workPool: { items: ['a'] },
      mode: { everyMs: 400 },
      retries: 2,
    });
    await new Promise((resolve) => setTimeout(resolve, 3_500));
    const failed = ended.filter((event) => event.outcome === 'failed');
    expect(failed.length).toBeGreaterThan(5);
    expect(
      failed.map(
        (event) => `${event.cause}#${event.attempt}${event.final === true ? ' final' : ''}`,
      ),
      'some failed run is final',
    ).toContainEqual(expect.stringMatching(/final$/));
  });
});
