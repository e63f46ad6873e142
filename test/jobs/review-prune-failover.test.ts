/**
 * Review: the history's prune deletes the record of a run that is still running on another worker
 * (it keeps the newest `keepRuns` names of the job, whoever wrote them and whether they ended or
 * not). The failover lookup (`JobRunStore.interruptedRuns`) reads the previous holder's runs from
 * that pruned history, so a holder that dies in a long run, while other workers make `keepRuns`
 * short runs, is never failed over, and `jobs.runs` never shows its run as running or
 * interrupted. docs/design/job-runs.md promises the failover for "a crash in step 3" and lists only
 * two cases not covered (a second crash of the new holder; a first record never written).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { FunctionRegistry, type JobContext, type JobDefinition } from '../../src/index.js';
import { resolveJob } from '../../src/jobs/job-definition.js';
import { JobRunStore } from '../../src/jobs/job-run-store.js';
import { RunJournal } from '../../src/jobs/run-journal.js';
import { MemoryZooKeeper } from '../../src/testing/index.js';
import { memoryProcess, type MemoryProcess } from '../support/memory-plan.js';

const JOBS = '/jobs';
const LEASE = { leaseMs: 600, pollMs: 100 } as const;
const open: MemoryProcess[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map(({ zkPlan }) => zkPlan.close()));
});

const JOB: JobDefinition = {
  name: 'mail',
  fn: 'poll',
  workPool: { items: ['a', 'b'] },
  mode: { everyMs: 60_000 },
  keepRuns: 2,
};

const silent = {
  runStarted: () => undefined,
  runEnded: () => undefined,
  log: () => undefined,
  error: (error: unknown) => {
    throw error;
  },
};

describe('review: the prune and the failover lookup', () => {
  it('a run still running on worker H is not pruned by runs of worker W (store level)', async () => {
    const server = new MemoryZooKeeper();
    const store = new JobRunStore(server.connect({ name: 'x' }), JOBS);
    let wall = Date.UTC(2026, 10, 27);
    const clock = { wall: () => (wall += 1), mono: () => wall };
    const job = resolveJob(JOB, new Date(wall));
    const h = new RunJournal(store, 'H-1', clock, silent);
    const w = new RunJournal(store, 'W-1', clock, silent);
    await h.start(job, { items: [{ id: 'a', token: 5 }], cause: 'tick', attempt: 1 }); // H's long run: never ended
    for (let run = 0; run < 2; run++) {
      const recorder = await w.start(job, {
        items: [{ id: 'b', token: 6 }],
        cause: 'tick',
        attempt: 1,
      });
      await recorder.ended('succeeded', undefined, undefined, false, Date.UTC(2026, 10, 27));
    }
    // H dies now, in its run: the taker of `a` asks for H's interrupted run of `a`.
    expect((await store.interruptedRuns('mail', 'H-1', ['a'])).get('a')).toBeDefined();
  });

  it("a worker whose clock is a little behind keeps its run's record through its own prune (store level)", async () => {
    const server = new MemoryZooKeeper();
    const store = new JobRunStore(server.connect({ name: 'x' }), JOBS);
    const now = Date.UTC(2026, 10, 27);
    const job = resolveJob(JOB, new Date(now)); // keepRuns 2
    // W's clock is right; H's is 500 ms behind (well within the lease's driftMs assumption of 1 s).
    const w = new RunJournal(store, 'W-1', { wall: () => now, mono: () => now }, silent);
    const h = new RunJournal(store, 'H-1', { wall: () => now - 500, mono: () => now }, silent);
    for (let run = 0; run < 2; run++) {
      const recorder = await w.start(job, {
        items: [{ id: 'b', token: 6 }],
        cause: 'tick',
        attempt: 1,
      });
      await recorder.ended('succeeded', undefined, undefined, false, Date.UTC(2026, 10, 27));
    }
    await h.start(job, { items: [{ id: 'a', token: 5 }], cause: 'tick', attempt: 1 }); // H's run, under way
    expect((await store.names('mail')).filter((name) => name.includes('-H-1-'))).toHaveLength(1);
  });

  it('a holder that dies in a long run while another worker makes keepRuns short runs is failed over (end to end)', async () => {
    const server = new MemoryZooKeeper();
    const calls: { worker: string; cause: string; items: string[] }[] = [];
    const registry = (worker: string, blocks: boolean) =>
      new FunctionRegistry().registerJob('poll', async (ctx: JobContext) => {
        calls.push({ worker, cause: ctx.cause, items: ctx.items.map((item) => item.id) });
        if (blocks)
          await new Promise((resolve) =>
            ctx.signal.addEventListener('abort', resolve, { once: true }),
          );
      });
    // H is not closed after the test: its client is crashed.
    const h = memoryProcess(server, 'h', registry('h', true));
    const hHandle = h.zkPlan.startJobWorker(JOBS, LEASE);
    const w = memoryProcess(server, 'w', registry('w', false));
    open.push(w);
    const wHandle = w.zkPlan.startJobWorker(JOBS, LEASE);
    const admin = memoryProcess(server, 'admin');
    open.push(admin);
    const jobs = admin.zkPlan.jobs(JOBS);
    await jobs.define(JOB);
    await expect
      .poll(() => [hHandle.held()['mail']?.length ?? 0, wHandle.held()['mail']?.length ?? 0], {
        timeout: 5_000,
      })
      .toEqual([1, 1]);
    const hItem = hHandle.held()['mail']?.[0] as string;
    await jobs.trigger('mail'); // H starts its long run of its item; W a short run of its own
    await expect.poll(() => calls.filter((call) => call.worker === 'h').length).toBe(1);
    for (let more = 0; more < 2; more++) {
      const before = calls.filter((call) => call.worker === 'w').length;
      await jobs.trigger('mail');
      await expect
        .poll(() => calls.filter((call) => call.worker === 'w').length)
        .toBeGreaterThan(before);
    }
    h.zk.crash(); // kill -9 in the middle of its run
    h.zk.expireSessionOnServer();
    await expect.poll(() => wHandle.held()['mail']?.length ?? 0, { timeout: 5_000 }).toBe(2); // W took H's item
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(
      calls.filter((call) => call.worker === 'w' && call.items.includes(hItem)),
      `W ran ${hItem} (H's item, interrupted) before the next tick, a minute away`,
    ).toContainEqual(expect.objectContaining({ cause: 'failover' }));
  });
});
