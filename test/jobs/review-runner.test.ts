/**
 * Review: JobRunner defects, with a fake host that behaves as JobWorker does.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { JobContext, JobItem } from '../../src/jobs/job-context.js';
import { resolveJob, type JobDefinition } from '../../src/jobs/job-definition.js';
import { JobRunner, type RunStart } from '../../src/jobs/job-runner.js';
import { runnerHost } from './support/runner-host.js';

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

const JOB: JobDefinition = {
  name: 'mail',
  fn: 'poll',
  workPool: { items: ['a', 'b'] },
  mode: { everyMs: 100 },
};

const runners: JobRunner[] = [];
afterEach(async () => {
  await Promise.all(runners.splice(0).map((runner) => runner.stop()));
});

describe('review: lost wake-up in runOnce when holding() drops an item', () => {
  // JobWorker.holding() calls expireOverdue(), which drops an overdue item and calls shareOut()
  // -> runner.setShare(rest) -> wake(), all synchronously, and then returns false. runOnce then
  // calls sleep(Infinity), and sleep() replaces the already-aborted wakeUp controller with a fresh
  // one: the wake is lost, and the runner sleeps until something else wakes it. With `b` still
  // held and nothing else changing, no tick ever runs again for `b`.
  it.each(['everyMs', 'continuous'] as const)(
    '%s: the runner keeps running the share left after an item of it ran out at the start of a run',
    async (kind) => {
      const calls: string[][] = [];
      let runner!: JobRunner;
      let aOverdue = false;
      let holdingCalls = 0;
      const job = resolveJob(
        { ...JOB, mode: kind === 'continuous' ? 'continuous' : { everyMs: 100 } },
        new Date(0),
      );
      runner = new JobRunner(
        job,
        async (ctx: JobContext) => {
          calls.push(ctx.items.map((item) => item.id));
          if (kind === 'continuous')
            await new Promise((resolve) =>
              ctx.signal.addEventListener('abort', resolve, { once: true }),
            );
        },
        runnerHost({
          holding: (_job, items: readonly JobItem[]) => {
            holdingCalls += 1;
            // As JobWorker.holding: an item whose deadline passed is dropped at once, the share set
            // again synchronously (drop -> shareOut -> setShare), and false returned.
            if (aOverdue && items.some((item) => item.id === 'a')) {
              runner.setShare([{ id: 'b', token: 2 }]);
              return false;
            }
            return true;
          },
        }),
      );
      runners.push(runner);
      // `a` runs out before the first run starts (e.g. the process froze, and the runner's timer
      // fired before the worker's deadline timer).
      aOverdue = true;
      runner.setShare([
        { id: 'a', token: 1 },
        { id: 'b', token: 2 },
      ]);
      await pause(600);
      expect(holdingCalls).toBeGreaterThan(0);
      // b is still held: it should have been run (ticks every 100 ms, or continuous).
      expect(calls).toContainEqual(['b']);
    },
  );
});

describe('review: an aborted run that overran a tick, with misfire skip', () => {
  // Docs (guide, Misfire): "A run that was aborted (its share changed or went, a lease was lost)
  // owes no catch-up: the ticks it overran are passed over, and the next tick runs with the share
  // as it is then." and "misfire: 'skip': it is dropped; the next run is the next tick."
  // Code: an aborted run skips misfireAfterRun(), so nextDue stays at the tick it overran (in the
  // past), and the loop runs that stale tick at once.
  it('does not run the tick it overran at once', async () => {
    const runs: { at: number; firedAt: number | undefined; cause: string }[] = [];
    let first = true;
    const runner = new JobRunner(
      resolveJob({ ...JOB, mode: { everyMs: 400 }, misfire: 'skip' }, new Date(0)),
      async (ctx: JobContext) => {
        runs.push({ at: Date.now(), firedAt: ctx.firedAt?.getTime(), cause: ctx.cause });
        if (first) {
          first = false;
          // A long run: it overruns its next tick and is then aborted by a change of share.
          await new Promise((resolve) =>
            ctx.signal.addEventListener('abort', resolve, { once: true }),
          );
        }
      },
      runnerHost({}),
    );
    runners.push(runner);
    runner.setShare([{ id: 'a', token: 1 }]);
    await expect.poll(() => runs.length, { timeout: 2_000 }).toBe(1); // the first tick's run
    expect(runs[0]?.cause).toBe('tick');
    await pause(550); // it overruns the next tick (400 ms after the first)
    const abortedAt = Date.now();
    runner.setShare([
      { id: 'a', token: 1 },
      { id: 'b', token: 3 },
    ]); // the run is aborted
    await pause(150);
    // Expected: no run before the next tick after the abort (the overrun tick is "passed over").
    const after = runs.slice(1);
    expect(
      after.map((run) => ({
        cause: run.cause,
        firedBeforeAbort: run.firedAt! < abortedAt,
        startedMsAfterAbort: run.at - abortedAt < 100,
      })),
      'a run of a tick the aborted run overran, started at once',
    ).toEqual([]);
  });
});

describe('review: a failover owed while another owed run fills the slot', () => {
  // docs/guide/jobs.md, Failover: "the new holder runs its share at once, cause: 'failover', with
  // failoverOf naming the interrupted run". JobRunner.owe keeps the first owed run; a trigger's run
  // cut short by the take of the interrupted run's item is owed again first (runDue), so the
  // failover is dropped from the slot: the run is recorded as a trigger's, without failoverOf, and
  // the history never shows the interrupted run failed over (counts.failovers misses it).
  it('records a run of the failover (cause, failoverOf), whatever else was owed or under way when it came', async () => {
    const starts: RunStart[] = [];
    const runner = new JobRunner(
      resolveJob({ ...JOB, mode: { everyMs: 60_000 } }, new Date(0)),
      async (ctx: JobContext) => {
        // A run of a timed job ends on its own (after 100 ms here), or when it is cut short.
        await new Promise((resolve) => {
          const timer = setTimeout(resolve, 100);
          ctx.signal.addEventListener('abort', () => (clearTimeout(timer), resolve(undefined)), {
            once: true,
          });
        });
      },
      runnerHost({}, starts),
    );
    runners.push(runner);
    runner.setShare([{ id: 'b', token: 2 }]);
    runner.trigger(); // the worker's own trigger run of b
    await expect.poll(() => starts.length).toBe(1);
    // The worker takes a from a holder that died in run-H: the share changes (the trigger's run is
    // cut short and owed again), then, after the history lookup's reads, the failover is owed.
    runner.setShare([
      { id: 'a', token: 9 },
      { id: 'b', token: 2 },
    ]);
    await pause(20);
    runner.failover('run-0000000000001-H-1', ['a']);
    // The failover is owed (it replaces a trigger still owed; one under way ends first) and runs.
    await expect
      .poll(() => starts.slice(1).map((start) => [start.cause, start.failoverOf]))
      .toContainEqual(['failover', 'run-0000000000001-H-1']);
  });
});
