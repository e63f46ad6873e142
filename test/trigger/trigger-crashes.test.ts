/**
 * The failure's hand-on under crashes and lost replies, over the in-memory ZooKeeper (the plan and
 * the crash sweep: failure-crash-sweep.ts). The worker process that fails the task dies right before
 * each of its writes (the final try's record, the inputs handed on, the failure marks, the release),
 * or loses the reply to each and sends it again, through the same session or a new one. Each time
 * the clean-up and the branch run with the right outcomes (exactly once, unless the process running
 * them died or its session expired: then once more), the blocked task never runs, and the plan ends
 * failed with that one task.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryZooKeeper } from '../../src/testing/index.js';
import { WRITE_OPS } from '../support/crash-scheduler.js';
import { FAST_BACKOFF, memoryProcess, type MemoryProcess } from '../support/memory-plan.js';
import {
  MAX_POINTS,
  PARENT,
  build,
  expectOneFailure,
  HAND_ON_WRITES,
  failureCrashSweep,
  functions,
  type Runs,
} from './failure-crash-sweep.js';

const open: MemoryProcess[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map(({ zkPlan }) => zkPlan.close().catch(() => undefined)));
});

describe('the failure hand-on under crashes', () => {
  it(
    'the worker failing the task dies before each of its writes: the clean-up and the branch get the failure, and the plan ends failed',
    { timeout: 300_000 },
    async () => {
      const points = await failureCrashSweep(open);
      console.log(points.join('\n'));
      expect(points.some((point) => point.startsWith('no crash after'))).toBe(true);
      for (const point of points.slice(-HAND_ON_WRITES.length))
        expect(point, 'each write of the hand-on was struck').toMatch(/: crash before write/);
    },
  );
});

describe('the failure hand-on under lost replies', () => {
  it.each([
    ['the same session', false],
    ['a new session, the first having expired', true],
  ])(
    'a reply lost at each write of the worker failing the task, resent through %s: the clean-up and the branch each run once',
    { timeout: 300_000 },
    async (_how, expireSession) => {
      const points: string[] = [];
      for (let faultAt = 1; faultAt <= MAX_POINTS; faultAt++) {
        const runs: Runs = { extract: 0, transform: 0, cleanup: [], branch: [] };
        const server = new MemoryZooKeeper();
        const builder = memoryProcess(server, 'builder', functions(runs));
        open.push(builder);
        const { plan, extract } = await build(builder);
        const worker = memoryProcess(server, 'worker', functions(runs), {
          fullScanIntervalMs: 100,
        });
        open.push(worker);
        let writes = 0;
        let struck: string | undefined;
        worker.zk.loseNextReply(
          (op, path) => {
            if (!WRITE_OPS.has(op) || !path.startsWith(plan)) return false;
            if (++writes !== faultAt) return false;
            struck = `${op} ${path.slice(plan.length)}`;
            return true;
          },
          { expireSession },
        );
        worker.zkPlan.startWorkers(PARENT, { count: 2, backoff: FAST_BACKOFF });
        await expectOneFailure(
          worker,
          plan,
          extract,
          runs,
          () => `reply lost at write ${faultAt} (${struck ?? 'none'})\n${server.dump(plan)}`,
          expireSession,
        );
        points.push(struck ?? 'none');
        await worker.zkPlan.close();
        if (struck === undefined) break;
      }
      console.log(points.join('\n'));
      expect(points.at(-1)).toBe('none');
      expect(points.length).toBeGreaterThan(10);
    },
  );
});
