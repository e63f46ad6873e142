/**
 * Review: docs/design/job-runs.md, "What a fault does at each write", row 3 (function), column "a
 * session that expires": "the run is aborted (ctx.signal), its record ends aborted; the new holder
 * fails it over". When the new holder is the same worker (its id is kept across sessions, and its
 * own lease is taken back at once: lease.ts takeOver, `lease.holder === newHolder`), job-worker.ts
 * `take` counts no failover (`previous.holder !== id`), so the aborted run is never run again: its
 * items wait for the next tick.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { FunctionRegistry, type JobContext } from '../../src/index.js';
import { MemoryZooKeeper } from '../../src/testing/index.js';
import { memoryProcess, type MemoryProcess } from '../support/memory-plan.js';

const JOBS = '/jobs';
const LEASE = { leaseMs: 600, pollMs: 100 } as const;
const open: MemoryProcess[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map(({ zkPlan }) => zkPlan.close()));
});

describe('review: a run aborted by a session expiry, its items taken back by the same worker', () => {
  it('is failed over (run again before the next tick), as the fault table says', async () => {
    const server = new MemoryZooKeeper();
    const calls: { cause: string; items: string[] }[] = [];
    let first = true;
    const functions = new FunctionRegistry().registerJob('poll', async (ctx: JobContext) => {
      calls.push({ cause: ctx.cause, items: ctx.items.map((item) => item.id) });
      if (first) {
        first = false;
        await new Promise((resolve) =>
          ctx.signal.addEventListener('abort', resolve, { once: true }),
        );
      }
    });
    const p = memoryProcess(server, 'p', functions);
    open.push(p);
    const handle = p.zkPlan.startJobWorker(JOBS, LEASE);
    const admin = memoryProcess(server, 'admin');
    open.push(admin);
    const jobs = admin.zkPlan.jobs(JOBS);
    await jobs.define({
      name: 'mail',
      fn: 'poll',
      workPool: { items: ['a', 'b'] },
      mode: { everyMs: 60_000 },
    });
    await expect.poll(() => handle.held()['mail']?.length ?? 0, { timeout: 5_000 }).toBe(2);
    await jobs.trigger('mail');
    await expect.poll(() => calls.length).toBe(1);
    p.zk.expireSession(); // the run is aborted; the worker comes back on a new session, same id
    await expect
      .poll(async () => (await jobs.runs('mail')).runs.map((run) => run.state))
      .toEqual(['aborted']);
    await expect.poll(() => handle.held()['mail']?.length ?? 0, { timeout: 5_000 }).toBe(2);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(calls.slice(1), "a run of the aborted run's items before the next tick").toContainEqual(
      expect.objectContaining({ cause: 'failover', items: ['a', 'b'] }),
    );
  });
});
