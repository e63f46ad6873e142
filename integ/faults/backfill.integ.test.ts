import { describe, expect, it } from 'vitest';
import type { BackfillStatus, ZkPlan } from '../../src/index.js';
import { decodeValue } from '../../src/serialization/codec.js';
import { readSpecRecord } from '../../src/spec/spec-record.js';
import { cronTickId, planPathForTick, sortTickIds } from '../../src/schedule/tick-record.js';
import type { ScheduleInput } from '../../src/schedule/schedule-definition.js';
import { isPlanName, scheduleNodes, tickNodes } from '../../src/zk/layout.js';
import { useFaultEnv } from '../support/fault-env.js';
import type { LogEntry } from '../support/execution-log.js';
import { TIMING } from '../support/zk-test-env.js';

/**
 * Backfills moved on by real `zk-plan worker --schedules` processes while they fire the same
 * schedule's live ticks, and one of them is killed with kill -9 while it fires a backfilled tick
 * (then started again). A serial and a parallel backfill of 10 past ticks each run side by side.
 * Each backfilled tick ends with exactly one plan (its own path), holding the spec's two tasks and
 * completing with the right result; the serial backfill's plans never overlap in time, the
 * parallel one's at most 3 at once; both backfills complete, each tick counted once.
 */
const SCHEDULES = '/faults/backfill-schedules';
const NAME = 'pulse';
const SESSION_TIMEOUT_MS = 2_000;

const faults = useFaultEnv();

function pulse(planParent: string): ScheduleInput {
  return {
    name: NAME,
    cron: '* * * * * *',
    planParent,
    misfire: 'fireAll',
    catchUpLimit: 1_000,
    overlap: 'allow',
    spec: {
      tasks: {
        load: { fn: 'work', params: [{ label: { $param: 'firedAt' }, ms: 150, add: 1 }] },
        report: {
          fn: 'work',
          params: [{ label: 'report', ms: 150, add: 2 }],
          inputs: ['load'],
          options: { keepResult: true },
        },
      },
    },
  };
}

/** The pid in the lock of a tick among `ticks` (`host:pid/scheduler`), if one is held. */
async function pidFiring(zkPlan: ZkPlan, ticks: ReadonlySet<string>): Promise<number | undefined> {
  const ids = sortTickIds(
    (await zkPlan.zk.tryGetChildren(scheduleNodes(SCHEDULES, NAME).ticks))?.children ?? [],
  );
  for (const id of ids.filter((tick) => ticks.has(tick))) {
    const lock = await zkPlan.zk.tryGetData(tickNodes(SCHEDULES, NAME, id).lock);
    if (lock === undefined) continue;
    const match = /:(\d+)\//.exec(String(decodeValue('lock', lock.data)));
    if (match) return Number(match[1]);
  }
  return undefined;
}

/** The most plans among `plans` whose tasks ran at once, from the functions' own log (start of the first run to end of the last). */
function mostAtOnce(log: readonly LogEntry[], plans: ReadonlySet<string>): number {
  const spans = new Map<string, { first: number; last: number }>();
  for (const entry of log) {
    const plan = entry.task.slice(0, entry.task.lastIndexOf('/'));
    if (!plans.has(plan) || (entry.event !== 'start' && entry.event !== 'end')) continue;
    const span = spans.get(plan) ?? { first: entry.at, last: entry.at };
    spans.set(plan, { first: Math.min(span.first, entry.at), last: Math.max(span.last, entry.at) });
  }
  const edges = [...spans.values()].flatMap((span) => [
    { at: span.first, change: 1 },
    { at: span.last, change: -1 },
  ]);
  edges.sort((a, b) => a.at - b.at || a.change - b.change);
  let running = 0;
  let most = 0;
  for (const edge of edges) {
    running += edge.change;
    most = Math.max(most, running);
  }
  return most;
}

describe('backfills under faults (real scheduler processes)', () => {
  it(
    'a serial and a parallel backfill of 10 ticks each, beside live ticks, with a scheduler killed while firing one: one plan per tick',
    { timeout: 180_000 * TIMING },
    async () => {
      const env = await faults.start({
        name: 'backfill-kill-9',
        tickTimeMs: 500,
        workers: { loops: 4, sessionTimeoutMs: SESSION_TIMEOUT_MS },
      });
      const slots = await env.startWorkers(3, {
        extraArgs: ['--schedules', SCHEDULES, '--no-retention'],
      });
      const schedules = env.zkPlan.schedules(SCHEDULES);
      const stored = await schedules.put(pulse(env.parent));
      const second = Math.floor(stored.activeSince / 1_000) * 1_000;
      // Two ranges of 10 whole seconds each, a few minutes back: before the schedule existed.
      const serialFrom = second - 300_000;
      const parallelFrom = second - 200_000;
      const serial = await schedules.backfill(NAME, {
        from: serialFrom,
        to: serialFrom + 9_000,
      });
      const parallel = await schedules.backfill(NAME, {
        from: parallelFrom,
        to: parallelFrom + 9_000,
        mode: 'parallel',
        concurrency: 3,
      });
      const ticksOf = (from: number): number[] =>
        Array.from({ length: 10 }, (_, index) => from + index * 1_000);
      const backfilled = [...ticksOf(serialFrom), ...ticksOf(parallelFrom)];
      // Kill whichever scheduler is caught firing a backfilled tick, once, and start it again.
      const backfilledIds = new Set(backfilled.map(cronTickId));
      let killed: number | undefined;
      for (const until = Date.now() + 20_000; killed === undefined && Date.now() < until;) {
        const pid = await pidFiring(env.zkPlan, backfilledIds);
        const index = slots.findIndex((worker) => worker.pid === pid && worker.alive);
        if (index < 0) {
          await new Promise((resolve) => setTimeout(resolve, 5));
          continue;
        }
        await slots[index]!.kill9();
        killed = pid;
        slots[index] = env.fleet.restart(slots[index]!);
      }
      expect(killed, 'no scheduler was caught firing a backfilled tick').toBeDefined();

      let finals: BackfillStatus[] = [];
      for (const until = Date.now() + 120_000 * TIMING; Date.now() < until;) {
        finals = await schedules.backfills(NAME);
        if (finals.every((backfill) => backfill.state === 'completed')) break;
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
      for (const id of [serial.id, parallel.id])
        expect(finals.find((backfill) => backfill.id === id)).toMatchObject({
          state: 'completed',
          total: 10,
          started: 10,
          completed: 10,
          failed: 0,
          notRun: 0,
        });
      await schedules.pause(NAME);

      const plansUnder = ((await env.zkPlan.zk.tryGetChildren(env.parent))?.children ?? [])
        .filter(isPlanName)
        .map((name) => `${env.parent}/${name}`);
      const expected = backfilled.map((tick) =>
        planPathForTick(env.parent, NAME, cronTickId(tick)),
      );
      // Plans of ticks before the schedule existed are exactly the backfilled ones; the others are live ticks'.
      const early = plansUnder.filter(
        (plan) => plan < planPathForTick(env.parent, NAME, cronTickId(second)),
      );
      expect(early.sort()).toEqual([...expected].sort());
      for (const plan of expected) {
        await env.zkPlan.waitForCompletion(plan, { timeoutMs: 30_000 * TIMING });
        const record = await readSpecRecord(env.zkPlan.zk, plan);
        expect(Object.keys(record?.tasks ?? {}).sort(), plan).toEqual(['load', 'report']);
        expect(await env.zkPlan.getResult(record?.tasks['report'] as string), plan).toBe(3);
      }
      const log = env.log();
      const serialAtOnce = mostAtOnce(log, new Set(expected.slice(0, 10)));
      const parallelAtOnce = mostAtOnce(log, new Set(expected.slice(10)));
      expect(serialAtOnce).toBe(1);
      expect(parallelAtOnce).toBeLessThanOrEqual(3);
      const live = plansUnder.length - early.length;
      expect(live).toBeGreaterThan(0);
      await schedules.remove(NAME);
      console.log(
        `backfill kill -9: killed pid ${killed} while it fired a backfilled tick; serial and parallel backfills of 10 ticks each completed, one plan per tick; at most ${serialAtOnce} serial and ${parallelAtOnce} parallel plans at once; ${live} live ticks fired meanwhile`,
      );
    },
  );
});
