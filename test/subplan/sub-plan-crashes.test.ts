/**
 * The sub-plan protocol under crashes and lost replies, over the in-memory ZooKeeper (the plan and
 * the sweep: sub-plan-crash-sweep.ts). The worker running the sub-plan task's checks dies right
 * before each of its writes (the record, the child's node and children, the record marked
 * `created`, the child's tasks, spec record and `ready`, the "not yet"), or loses the reply to each
 * write of the protocol and sends it again, through the same session or a new one. Each time one
 * child plan exists, each child task ran once, and the parent completes with the child's result.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryZooKeeper } from '../../src/testing/index.js';
import { WRITE_OPS } from '../support/crash-scheduler.js';
import { FAST_BACKOFF, memoryProcess, type MemoryProcess } from '../support/memory-plan.js';
import {
  CHILDREN,
  MAX_POINTS,
  PARENT,
  build,
  expectOneChild,
  functions,
  newRuns,
  subPlanCrashSweep,
} from './sub-plan-crash-sweep.js';

const open: MemoryProcess[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map(({ zkPlan }) => zkPlan.close().catch(() => undefined)));
});

/** The writes of the sub-plan protocol: the parent's record of the child, and everything under the children's parent. */
function isSubPlanWrite(path: string): boolean {
  return path.includes('/sub-plans') || path.startsWith(`${CHILDREN}/`);
}

describe('the sub-plan protocol under crashes', () => {
  it(
    'the worker checking the sub-plan task dies before each of its writes: one child plan, each child task run once, the right result',
    { timeout: 300_000 },
    async () => {
      const points = await subPlanCrashSweep(open);
      console.log(points.join('\n'));
      expect(points.at(-1)).toMatch(/^no crash after/);
      const struck = points.join('\n');
      for (const write of [
        /create \/plans\/plan-\d+\/sub-plans\/task-\d+\)/,
        /create \/children\/plan-\d+~task-\d+\)/,
        /setData \/plans\/plan-\d+\/sub-plans\/task-\d+\)/,
        /create \/children\/plan-\d+~task-\d+\/task-\)/,
        /create \/children\/plan-\d+~task-\d+\/spec\)/,
        /create \/children\/plan-\d+~task-\d+\/ready\)/,
        /create \/plans\/plan-\d+\/task-\d+\/waiting\)/,
      ])
        expect(struck, `a crash before ${write.source}`).toMatch(write);
    },
  );
});

describe('the sub-plan protocol under lost replies', () => {
  it.each([
    ['the same session', false],
    ['a new session, the first having expired', true],
  ])(
    'a reply lost at each write of the protocol, resent through %s: one child plan, each child task run once',
    { timeout: 300_000 },
    async (_how, expireSession) => {
      const points: string[] = [];
      for (let faultAt = 1; faultAt <= MAX_POINTS; faultAt++) {
        const runs = newRuns();
        const server = new MemoryZooKeeper();
        const builder = memoryProcess(server, 'builder', functions(runs));
        open.push(builder);
        const built = await build(builder);
        const childRunner = memoryProcess(server, 'children', functions(runs));
        open.push(childRunner);
        childRunner.zkPlan.startWorkers(CHILDREN, { count: 2, backoff: FAST_BACKOFF });
        const worker = memoryProcess(server, 'worker', functions(runs), {
          fullScanIntervalMs: 100,
        });
        open.push(worker);
        let writes = 0;
        let struck: string | undefined;
        worker.zk.loseNextReply(
          (op, path) => {
            if (!WRITE_OPS.has(op) || !isSubPlanWrite(path)) return false;
            if (++writes !== faultAt) return false;
            struck = `${op} ${path}`;
            return true;
          },
          { expireSession },
        );
        worker.zkPlan.startWorkers(PARENT, { count: 2, backoff: FAST_BACKOFF });
        await expectOneChild(
          worker,
          built,
          runs,
          () => `reply lost at write ${faultAt} (${struck ?? 'none'})\n${server.dump(CHILDREN)}`,
        );
        await Promise.all(
          open.splice(0).map(({ zkPlan }) => zkPlan.close().catch(() => undefined)),
        );
        if (struck === undefined) break;
        points.push(struck);
      }
      console.log(points.join('\n'));
      expect(points.length).toBeGreaterThan(8);
      expect(points.some((point) => point.endsWith('/ready'))).toBe(true);
    },
  );
});
