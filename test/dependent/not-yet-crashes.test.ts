/**
 * A dependent task's checks under crashes, over the in-memory ZooKeeper: the worker that checks
 * dies right before each of its first writes (the claim, the `waiting` record made and then
 * replaced, the runnable entry's removal, the release), covering two whole checks. Another worker
 * then finishes the plan once the awaited plan completed: the dependent completes, its dependent
 * runs once with the right input, and nothing of the wait is left. A worker that dies after it took
 * the task out of the index, before it could put it back at the time to check again, leaves it to
 * the full scan of the others (as a retry delay is): the survivor scans every 100 ms, not every 10 s.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { FunctionRegistry, call, waitForPlan } from '../../src/index.js';
import { MemoryZooKeeper } from '../../src/testing/index.js';
import { CrashScheduler, Victim } from '../support/crash-scheduler.js';
import { FAST_BACKOFF, memoryProcess, pause, type MemoryProcess } from '../support/memory-plan.js';

/**
 * The worker's first writes: its registry record, then two checks of the dependent (claim, record
 * made then replaced, unindex, release), with a claim between them that came before the time to
 * check again (unindex, release, index again at that time).
 */
const CRASH_POINTS = 16;

const open: MemoryProcess[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map(({ zkPlan }) => zkPlan.close().catch(() => undefined)));
});

function functions(reports: string[]): FunctionRegistry {
  return new FunctionRegistry()
    .register('upstream', () => 'upstream done')
    .register('after', (_ctx, dependency: { state: string }) => {
      reports.push(dependency.state);
      return `after ${dependency.state}`;
    });
}

describe('a dependent task under crashes', () => {
  it(
    'its checking worker dies before each of its writes: the dependent still completes once the other plan did, and its dependent runs once',
    { timeout: 120_000 },
    async () => {
      const outcomes: string[] = [];
      for (let crashAt = 1; crashAt <= CRASH_POINTS; crashAt++) {
        const reports: string[] = [];
        const scheduler = new CrashScheduler();
        const server = new MemoryZooKeeper({ scheduler });
        const builder = memoryProcess(server, 'builder', functions(reports));
        open.push(builder);
        const upstream = await builder.zkPlan.createPlan('/upstream');
        await builder.zkPlan.addTask(upstream, call('upstream'));
        await builder.zkPlan.markAsReady(upstream);
        const downstream = await builder.zkPlan.createPlan('/plans', { maxAttempts: 1 });
        const wait = await builder.zkPlan.addTask(
          downstream,
          waitForPlan({ plan: upstream, checkEveryMs: 10 }),
        );
        const report = await builder.zkPlan.addTask(downstream, call('after'), [wait], {
          keepResult: true,
        });
        await builder.zkPlan.markAsReady(downstream);

        // Not closed after the test: a crashed process's calls are never answered.
        const doomed = memoryProcess(server, 'doomed', functions(reports));
        const victim = new Victim(server, doomed.zk, crashAt);
        scheduler.victim = victim;
        void doomed.zkPlan.startWorkers('/plans', { count: 1, backoff: FAST_BACKOFF });
        await Promise.race([victim.crashed, pause(2_000)]);
        scheduler.victim = undefined;
        expect(victim.point, `no crash before write ${crashAt}`).toBeDefined();

        const started = Date.now();
        const survivor = memoryProcess(server, 'survivor', functions(reports), {
          fullScanIntervalMs: 100,
        });
        open.push(survivor);
        survivor.zkPlan.startWorkers('/plans', { count: 1, backoff: FAST_BACKOFF });
        survivor.zkPlan.startWorkers('/upstream', { count: 1, backoff: FAST_BACKOFF });
        await survivor.zkPlan.waitForCompletion(downstream, { timeoutMs: 10_000 });
        expect(await survivor.zkPlan.getResult(report)).toBe('after completed');
        expect(reports).toEqual(['completed']);
        expect(server.exists(wait)).toBe(false);
        outcomes.push(`${victim.describe()}: completed in ${Date.now() - started} ms`);
      }
      console.log(outcomes.join('\n'));
      expect(new Set(outcomes.map((line) => line.replace(/.*\((\w+) .*/, '$1')))).toEqual(
        new Set(['create', 'setData', 'delete']),
      );
    },
  );
});
