/**
 * A backfill under faults, over the in-memory ZooKeeper: the scheduler process that makes the
 * backfill and moves it on dies before each of its writes in turn (crash sweep), or loses the reply
 * to each of them, with and without its session expiring (it then resends through a new one). A
 * second scheduler finishes what a dead one left. Whatever the point, every tick of the range ends
 * with exactly one plan, built once and run once, and the backfill completes, counting each tick once.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryZooKeeper } from '../../src/testing/index.js';
import { CrashScheduler, Victim, WRITE_OPS } from '../support/crash-scheduler.js';
import { FAST_BACKOFF, memoryProcess, pause, type MemoryProcess } from '../support/memory-plan.js';
import {
  PLANS,
  PULSE,
  SCHEDULES,
  T0,
  plansOn,
  schedulerProcess,
  type SchedulerProcess,
} from '../schedule/schedule-harness.js';
import { TickRuns, backfillOf, passUntilFinished, pastTicks } from './backfill-fixture.js';

const MAX_FAULT_POINTS = 300;
/** Three past ticks, two at a time: both a full slot and a freed one are stepped through. */
const RANGE = pastTicks(3);
const OPTIONS = { from: RANGE.from, to: RANGE.to, mode: 'parallel', concurrency: 2 } as const;

const open: MemoryProcess[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map(({ zkPlan }) => zkPlan.close().catch(() => undefined)));
});

function track<T extends MemoryProcess>(proc: T): T {
  open.push(proc);
  return proc;
}

/** A paused schedule (no live tick fires: every plan is the backfill's) and workers with `runs`'s functions. */
async function setUp(server: MemoryZooKeeper, runs: TickRuns): Promise<SchedulerProcess> {
  const setter = track(schedulerProcess(server, 'setter', T0 + 20));
  await setter.schedules.put(PULSE);
  await setter.schedules.pause('pulse');
  const workers = track(memoryProcess(server, 'workers', runs.functions()));
  workers.zkPlan.startWorkers(PLANS, { count: 4, backoff: FAST_BACKOFF, retention: false });
  return setter;
}

/** Makes the backfill and steps it to its end with `proc` alone; resolves its id. */
async function backfillWith(proc: SchedulerProcess): Promise<string> {
  proc.clock.now = T0 + 20;
  const made = await proc.schedules.backfill('pulse', OPTIONS);
  await passUntilFinished([proc], made.id);
  return made.id;
}

/**
 * What every fault point must leave: one plan per tick of the range and no other, each completed,
 * each tick's first task run once, and the backfill completed with every tick counted once.
 */
async function expectOneRunPerTick(
  checker: SchedulerProcess,
  server: MemoryZooKeeper,
  runs: TickRuns,
): Promise<void> {
  const [backfill, ...others] = await checker.schedules.backfills('pulse');
  expect(others).toEqual([]);
  expect(backfill).toMatchObject({
    state: 'completed',
    total: 3,
    started: 3,
    completed: 3,
    failed: 0,
    notRun: 0,
    running: [],
  });
  expect(plansOn(server)).toEqual(RANGE.plans);
  for (const plan of RANGE.plans) {
    expect(await checker.zkPlan.plans.status(`${PLANS}/${plan}`)).toMatchObject({
      state: 'completed',
    });
    const view = await checker.zkPlan.plans.describe(`${PLANS}/${plan}`);
    expect(view.tasks.map((task) => task.key).sort()).toEqual(['load', 'report']);
  }
  expect([...runs.loads.values()]).toEqual([1, 1, 1]);
}

describe('a backfill under faults', () => {
  it(
    'its scheduler dies before any of its writes: the next scheduler finishes it, one plan per tick, each run once',
    { timeout: 600_000 },
    async () => {
      const outcomes: string[] = [];
      for (let crashAt = 1; crashAt <= MAX_FAULT_POINTS; crashAt++) {
        const runs = new TickRuns();
        const scheduler = new CrashScheduler();
        const server = new MemoryZooKeeper({ scheduler });
        await setUp(server, runs);
        const doomed = track(schedulerProcess(server, 'doomed', T0 + 20, SCHEDULES));
        const victim = new Victim(server, doomed.zk, crashAt);
        scheduler.victim = victim;
        // A crashed process's calls are never answered: the race ends at the crash.
        await Promise.race([victim.crashed, backfillWith(doomed).catch(() => undefined)]);
        scheduler.victim = undefined;
        const survivor = track(schedulerProcess(server, 'survivor', T0 + 20, SCHEDULES));
        // The operator makes the backfill again if the dead process's call left none.
        const existing = await survivor.schedules.backfills('pulse');
        const backfill = existing[0] ?? (await survivor.schedules.backfill('pulse', OPTIONS));
        expect(await passUntilFinished([survivor], backfill.id)).toBeDefined();
        await expectOneRunPerTick(survivor, server, runs);
        outcomes.push(
          `${victim.describe()}: backfill ${existing.length > 0 ? 'made by the dead process' : 'made again'}`,
        );
        if (victim.point === undefined) break;
      }
      console.log(outcomes.join('\n'));
      expect(outcomes.length).toBeGreaterThan(30);
      expect(outcomes.at(-1)).toMatch(/no crash/);
    },
  );

  it.each([false, true])(
    'its scheduler loses the reply to any of its writes (session expired: %s) and goes on: one plan per tick, each run once',
    { timeout: 600_000 },
    async (expireSession) => {
      const outcomes: string[] = [];
      for (let faultAt = 1; faultAt <= MAX_FAULT_POINTS; faultAt++) {
        const runs = new TickRuns();
        const server = new MemoryZooKeeper();
        await setUp(server, runs);
        const proc = track(schedulerProcess(server, 'scheduler', T0 + 20, SCHEDULES));
        let writes = 0;
        let struck: string | undefined;
        proc.zk.loseNextReply(
          (op, path) => {
            if (!WRITE_OPS.has(op) || ++writes !== faultAt) return false;
            struck = `${op} ${path}`;
            return true;
          },
          { expireSession },
        );
        // A call that fails on the lost reply is made again, as an operator would.
        const id = await backfillWith(proc).catch(async () => {
          const existing = await proc.schedules.backfills('pulse');
          return existing[0]?.id ?? (await backfillWith(proc));
        });
        const final = await backfillOf(proc, id);
        if (final?.state === 'running') await passUntilFinished([proc], id);
        await expectOneRunPerTick(proc, server, runs);
        outcomes.push(`lost reply to write ${faultAt}: ${struck ?? 'none (all writes done)'}`);
        if (struck === undefined) break;
        await pause(0);
      }
      console.log(outcomes.join('\n'));
      expect(outcomes.length).toBeGreaterThan(30);
    },
  );
});
