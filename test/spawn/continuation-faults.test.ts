/**
 * `ctx.continueWith` under crashes, over the in-memory ZooKeeper: the handing-over process dies
 * before each of its writes, and a second process finishes the plan. The dependent is only ever
 * given the one right result, one continuation exists, and every task is done. Lost replies:
 * continuation-lost-replies.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { MemoryZooKeeper } from '../../src/testing/index.js';
import { CrashScheduler, Victim } from '../support/crash-scheduler.js';
import { FAST_BACKOFF, memoryProcess } from '../support/memory-plan.js';
import {
  PARENT,
  functions,
  newRuns,
  splitAndReport,
  squaresBetween,
} from './continuation-fixture.js';

const MAX_CRASH_POINTS = 200;

describe('ctx.continueWith under crashes', () => {
  it(
    'a crash of the handing-over process before any of its writes: the dependent gets one result, the right one, and one continuation exists',
    { timeout: 600_000 },
    async () => {
      const outcomes: string[] = [];
      const ITEMS = 3;
      for (let crashAt = 1; crashAt <= MAX_CRASH_POINTS; crashAt++) {
        const runs = newRuns();
        const scheduler = new CrashScheduler();
        const server = new MemoryZooKeeper({ scheduler });
        const builder = memoryProcess(server, 'builder', functions(runs));
        const { plan, split, report } = await splitAndReport(builder, ITEMS);
        const doomed = memoryProcess(server, 'doomed', functions(runs));
        const victim = new Victim(server, doomed.zk, crashAt);
        scheduler.victim = victim;
        const doomedPool = doomed.zkPlan.startWorkers(PARENT, { backoff: FAST_BACKOFF });
        await Promise.race([
          victim.crashed,
          builder.zkPlan.waitForCompletion(plan, { timeoutMs: 10_000 }),
        ]);
        scheduler.victim = undefined;
        const crashed = victim.point !== undefined;
        if (crashed) void doomedPool.stop().catch(() => undefined);
        else await doomedPool.stop();
        const survivor = memoryProcess(server, 'survivor', functions(runs));
        const pool = survivor.zkPlan.startWorkers(PARENT, { count: 2, backoff: FAST_BACKOFF });
        // What a deletion cut short leaves out of the runnable index is found by the workers' full
        // scan, every 10 s: the wait allows for it.
        await survivor.zkPlan.waitForCompletion(plan, { timeoutMs: 30_000 });
        await pool.stop();

        const expected = squaresBetween(0, ITEMS);
        expect(await survivor.zkPlan.getResult(split)).toBe(expected);
        expect(await survivor.zkPlan.getResult(report)).toBe(expected);
        // The dependent may run again (its own worker died), but it is only ever given the one result.
        expect(new Set(runs.reported)).toEqual(new Set([expected]));
        expect(new Set(runs.spawned.map((paths) => paths.join(','))).size).toBe(1);
        expect(new Set(runs.squareTasks)).toEqual(new Set(runs.spawned[0]));
        expect(new Set(runs.sumTasks).size).toBe(1);
        const view = await survivor.zkPlan.plans.describe(plan);
        expect(view.tasks.filter((task) => task.fn === 'sum')).toHaveLength(1);
        expect(view.tasks.every((task) => task.state === 'done')).toBe(true);
        outcomes.push(
          `crash before write ${crashAt}: split ran ${runs.splits}×, squares ${runs.squareTasks.length}×, sum ${runs.sumTasks.length}×, report ${runs.reported.length}×`,
        );
        if (!crashed) break;
      }
      expect(outcomes.length).toBeGreaterThan(20);
      expect(outcomes.at(-1)).toMatch(/split ran 1×, squares 3×, sum 1×, report 1×/);
      console.log(outcomes.join('\n'));
    },
  );
});
