/**
 * `ctx.continueWith` under lost replies, over the in-memory ZooKeeper: a reply lost at each write
 * of the worker process and resent, through the same session, or through a new one after the first
 * expired. The dependent is only ever given the one right result, one continuation exists, and
 * every task is done.
 */
import { describe, expect, it } from 'vitest';
import { MemoryZooKeeper } from '../../src/testing/index.js';
import { WRITE_OPS } from '../support/crash-scheduler.js';
import { FAST_BACKOFF, memoryProcess } from '../support/memory-plan.js';
import {
  PARENT,
  functions,
  newRuns,
  splitAndReport,
  squaresBetween,
} from './continuation-fixture.js';

const MAX_FAULT_POINTS = 200;

/**
 * The writes of the spawn and hand-over protocols: under the spawning task, the plan's mark, batch
 * markers, task creates, and a continuation's link and input. The others (feeding inputs, finishing
 * tasks) are those of every plan, which the plan simulation covers.
 */
function isSpawnWrite(plan: string, split: string, path: string): boolean {
  return (
    path.startsWith(`${split}/`) ||
    path === `${plan}/spawned` ||
    path.startsWith(`${plan}/batch-`) ||
    path === `${plan}/task-` ||
    path.endsWith('/prov-9999999999')
  );
}

describe('ctx.continueWith under lost replies', () => {
  it.each([
    ['the same session', 'every write', false],
    ['a new session, the first having expired', 'each write of the spawn and hand-over', true],
  ])(
    'a reply lost and resent through %s, at %s of the worker process: the dependent gets the one right result, and one continuation exists',
    { timeout: 600_000 },
    async (_how, _where, expireSession) => {
      const ITEMS = 3;
      const outcomes: string[] = [];
      for (let faultAt = 1; faultAt <= MAX_FAULT_POINTS; faultAt++) {
        const runs = newRuns();
        const server = new MemoryZooKeeper();
        const builder = memoryProcess(server, 'builder', functions(runs));
        const { plan, split, report } = await splitAndReport(builder, ITEMS);
        const worker = memoryProcess(server, 'worker', functions(runs));
        let writes = 0;
        let struck: string | undefined;
        worker.zk.loseNextReply(
          (op, path) => {
            if (!WRITE_OPS.has(op)) return false;
            // With an expiry (slow to recover from), only the protocol's own writes are struck.
            if (expireSession && !isSpawnWrite(plan, split, path)) return false;
            if (++writes !== faultAt) return false;
            struck = `${op} ${path.slice(plan.length)}`;
            return true;
          },
          { expireSession },
        );
        const pool = worker.zkPlan.startWorkers(PARENT, { count: 2, backoff: FAST_BACKOFF });
        await worker.zkPlan
          .waitForCompletion(plan, { timeoutMs: 30_000 })
          .catch((error: unknown) => {
            throw new Error(
              `reply lost at write ${faultAt} (${struck}): ${String(error)}\n${server.dump(plan)}`,
            );
          });
        await pool.stop();

        const expected = squaresBetween(0, ITEMS);
        expect(await builder.zkPlan.getResult(split)).toBe(expected);
        expect(await builder.zkPlan.getResult(report)).toBe(expected);
        expect(new Set(runs.reported)).toEqual(new Set([expected]));
        expect(new Set(runs.spawned.map((paths) => paths.join(','))).size).toBe(1);
        expect(new Set(runs.sumTasks).size).toBe(1);
        const view = await builder.zkPlan.plans.describe(plan);
        expect(view.tasks.filter((task) => task.fn === 'sum')).toHaveLength(1);
        expect(view.tasks.filter((task) => task.fn === 'square')).toHaveLength(ITEMS);
        expect(view.tasks.every((task) => task.state === 'done')).toBe(true);
        if (struck === undefined) break;
        outcomes.push(`reply lost at write ${faultAt} (${struck}): split ran ${runs.splits}×`);
      }
      expect(outcomes.length).toBeGreaterThan(expireSession ? 10 : 20);
      console.log(outcomes.join('\n'));
    },
  );
});
