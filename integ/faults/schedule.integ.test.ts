import { describe, expect, it } from 'vitest';
import { prng } from '../../examples/seeded-random.js';
import { decodeValue } from '../../src/serialization/codec.js';
import { readSpecRecord } from '../../src/spec/spec-record.js';
import {
  cronTickId,
  planPathForTick,
  sortTickIds,
  timeOfTickId,
} from '../../src/schedule/tick-record.js';
import type { ScheduleInput } from '../../src/schedule/schedule-definition.js';
import { scheduleNodes, tickNodes, isPlanName } from '../../src/zk/layout.js';
import type { ZkPlan } from '../../src/index.js';
import { pauseUntil, useFaultEnv, type FaultEnv } from '../support/fault-env.js';
import type { WorkerProcess } from '../support/worker-process.js';
import { TIMING } from '../support/zk-test-env.js';

/**
 * Schedules fired by real `zk-plan worker --schedules` processes on a real server, under faults.
 * Each tick's plan is the tick's own path, so "one plan per tick" is read off the plans' parent:
 * every tick in the window has its plan (fireAll), each tick's record says fired, and each plan
 * holds exactly the spec's two tasks and completes. Set FAULTS_SEED to repeat a run.
 */
const SCHEDULES = '/faults/schedules';
const SESSION_TIMEOUT_MS = 2_000;
const TICK_MS = 500;
const NAME = 'pulse';

const faults = useFaultEnv();

function pulse(planParent: string, overrides: Partial<ScheduleInput> = {}): ScheduleInput {
  return {
    name: NAME,
    cron: '* * * * * *',
    planParent,
    misfire: 'fireAll',
    catchUpLimit: 1_000,
    overlap: 'allow',
    spec: {
      tasks: {
        load: { fn: 'work', params: [{ label: { $param: 'firedAt' }, ms: 30, add: 1 }] },
        report: {
          fn: 'work',
          params: [{ label: 'report', ms: 30, add: 2 }],
          inputs: ['load'],
          options: { keepResult: true },
        },
      },
    },
    ...overrides,
  };
}

async function startSchedulers(env: FaultEnv, count: number): Promise<WorkerProcess[]> {
  return await env.startWorkers(count, { extraArgs: ['--schedules', SCHEDULES, '--no-retention'] });
}

/** The pid in a tick lock's `by` (`host:pid/scheduler`), for the newest tick whose lock is held. */
async function firingPid(zkPlan: ZkPlan): Promise<number | undefined> {
  const ids = sortTickIds(
    (await zkPlan.zk.tryGetChildren(scheduleNodes(SCHEDULES, NAME).ticks))?.children ?? [],
  );
  for (const id of ids.slice(-3).reverse()) {
    const lock = await zkPlan.zk.tryGetData(tickNodes(SCHEDULES, NAME, id).lock);
    if (lock === undefined) continue;
    const match = /:(\d+)\//.exec(String(decodeValue('lock', lock.data)));
    if (match) return Number(match[1]);
  }
  return undefined;
}

/** Waits until every tick up to `until` (of the every-second schedule) is final; returns them by tick. */
async function settledTicks(
  zkPlan: ZkPlan,
  after: number,
  deadline: number,
): Promise<Map<number, { state: string; plan: string; reason?: string }>> {
  const until = Math.floor(after / 1000) * 1000;
  for (;;) {
    const ids = sortTickIds(
      (await zkPlan.zk.tryGetChildren(scheduleNodes(SCHEDULES, NAME).ticks))?.children ?? [],
    );
    const cursor = await zkPlan.zk.tryGetData(scheduleNodes(SCHEDULES, NAME).cursor);
    const cursorTick =
      cursor === undefined ? 0 : (decodeValue('cursor', cursor.data) as { tick: number }).tick;
    const records = await Promise.all(
      ids
        .filter((id) => (timeOfTickId(id) as number) <= until)
        .map(async (id) => {
          const node = await zkPlan.zk.getData(tickNodes(SCHEDULES, NAME, id).record);
          return decodeValue(id, node.data) as {
            tick: number;
            state: string;
            plan: string;
            reason?: string;
          };
        }),
    );
    if (cursorTick >= until && records.every((record) => record.state !== 'pending'))
      return new Map(records.map((record) => [record.tick, record]));
    if (Date.now() > deadline)
      throw new Error(
        `ticks up to ${new Date(until).toISOString()} not settled: ${JSON.stringify(records.filter((r) => r.state === 'pending'))}`,
      );
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** Every plan under the parent is a tick's, with exactly the spec's two tasks' results, and completes. */
async function checkPlans(
  zkPlan: ZkPlan,
  parent: string,
  expected: readonly string[],
  deadlineMs: number,
): Promise<void> {
  const plans = ((await zkPlan.zk.tryGetChildren(parent))?.children ?? [])
    .filter(isPlanName)
    .map((name) => `${parent}/${name}`);
  for (const plan of expected) expect(plans, `no plan ${plan}`).toContain(plan);
  for (const plan of expected) {
    await zkPlan.waitForCompletion(plan, { timeoutMs: deadlineMs });
    const record = await readSpecRecord(zkPlan.zk, plan);
    expect(Object.keys(record?.tasks ?? {}).sort(), plan).toEqual(['load', 'report']);
    expect(await zkPlan.getResult(record?.tasks['report'] as string), plan).toBe(3); // (1) + 2
  }
}

describe('schedules under faults (real scheduler processes)', () => {
  it(
    'exactly one plan per tick while whichever scheduler is firing is killed with kill -9 every few seconds for 30 s',
    { timeout: 150_000 * TIMING },
    async () => {
      const seed = Number(process.env['FAULTS_SEED'] ?? Date.now() % 1_000_000);
      const random = prng(seed);
      const env = await faults.start({
        name: 'schedule-kill-9',
        tickTimeMs: TICK_MS,
        workers: { loops: 2, sessionTimeoutMs: SESSION_TIMEOUT_MS },
      });
      const slots = await startSchedulers(env, 3);
      const stored = await env.zkPlan.schedules(SCHEDULES).put(pulse(env.parent));
      const windowEnd = stored.activeSince + 30_000;
      let kills = 0;
      for (let round = 1; Date.now() < windowEnd - 2_000; round++) {
        await pauseUntil(stored.activeSince + round * 3_000 + Math.floor((random() - 0.5) * 1_000));
        // Catch one firing: the newest held tick lock names its process.
        let pid: number | undefined;
        for (const until = Date.now() + 1_500; pid === undefined && Date.now() < until;) {
          pid = await firingPid(env.zkPlan);
          if (pid === undefined) await new Promise((resolve) => setTimeout(resolve, 5));
        }
        const index = slots.findIndex((worker) => worker.pid === pid && worker.alive);
        if (index < 0) continue;
        await slots[index]!.kill9(); // it held a tick's lock a moment ago: killed while firing
        kills += 1;
        slots[index] = env.fleet.restart(slots[index]!);
      }
      const ticks = await settledTicks(env.zkPlan, windowEnd, Date.now() + 30_000 * TIMING);
      const expectedTicks: number[] = [];
      for (
        let tick = Math.floor(stored.activeSince / 1000) * 1000 + 1000;
        tick <= windowEnd;
        tick += 1000
      )
        expectedTicks.push(tick);
      expect([...ticks.keys()].sort((a, b) => a - b)).toEqual(expectedTicks);
      expect([...ticks.values()].filter((record) => record.state !== 'fired')).toEqual([]);
      const expectedPlans = expectedTicks.map((tick) =>
        planPathForTick(env.parent, NAME, cronTickId(tick)),
      );
      expect([...ticks.values()].map((record) => record.plan)).toEqual(expectedPlans);
      await checkPlans(env.zkPlan, env.parent, expectedPlans, 60_000 * TIMING);
      await env.zkPlan.schedules(SCHEDULES).remove(NAME);
      console.log(
        `schedule kill -9 (seed ${seed}): ${expectedTicks.length} ticks in 30 s, ${expectedPlans.length} plans, each once; ` +
          `${kills} kills of the process holding a tick's lock`,
      );
    },
  );

  it(
    'a scheduler frozen with SIGSTOP past its session timeout while firing, then resumed, makes no plan for a tick another fired',
    { timeout: 120_000 * TIMING },
    async () => {
      const env = await faults.start({
        name: 'schedule-sigstop',
        tickTimeMs: TICK_MS,
        workers: { loops: 2, sessionTimeoutMs: SESSION_TIMEOUT_MS },
      });
      const slots = await startSchedulers(env, 3);
      const stored = await env.zkPlan.schedules(SCHEDULES).put(pulse(env.parent));
      let frozen: WorkerProcess | undefined;
      for (const until = Date.now() + 20_000; frozen === undefined && Date.now() < until;) {
        const pid = await firingPid(env.zkPlan);
        frozen = slots.find((worker) => worker.pid === pid);
        if (frozen === undefined) await new Promise((resolve) => setTimeout(resolve, 2));
      }
      expect(frozen, 'no scheduler was caught holding a tick lock').toBeDefined();
      frozen!.suspend();
      const frozenAt = Date.now();
      await new Promise((resolve) => setTimeout(resolve, SESSION_TIMEOUT_MS + 3_000));
      frozen!.resume();
      await new Promise((resolve) => setTimeout(resolve, 3_000));
      await env.zkPlan.schedules(SCHEDULES).pause(NAME); // then every tick recorded so far settles, and no new one comes
      const [summary] = await env.zkPlan.schedules(SCHEDULES).list();
      const ticks = await settledTicks(
        env.zkPlan,
        Date.parse(summary?.lastTick ?? ''),
        Date.now() + 30_000 * TIMING,
      );
      // fireAll: every whole second from the schedule's start to its last tick has its plan, whatever
      // the machine's load made that last tick (the freeze and the wait after it span 8 s).
      const lastTick = Math.floor(Date.parse(summary?.lastTick ?? '') / 1000) * 1000;
      const expectedTicks: number[] = [];
      for (
        let tick = Math.floor(stored.activeSince / 1000) * 1000 + 1000;
        tick <= lastTick;
        tick += 1000
      )
        expectedTicks.push(tick);
      expect(
        expectedTicks.length,
        'the schedule ran for fewer than 5 ticks',
      ).toBeGreaterThanOrEqual(5);
      expect([...ticks.keys()].sort((a, b) => a - b)).toEqual(expectedTicks);
      // Every tick fired, but for the newest ones the test's own pause caught before their firer
      // decided them (a loaded machine fires a tick late): those are skipped, "the schedule is
      // paused", and only at the end. Any other record is shown whole (its state and reason).
      const inOrder = expectedTicks.map((tick) => ticks.get(tick));
      const firstPaused = inOrder.findIndex((record) => record?.state === 'skipped');
      const firedRecords = firstPaused < 0 ? inOrder : inOrder.slice(0, firstPaused);
      const pausedRecords = firstPaused < 0 ? [] : inOrder.slice(firstPaused);
      expect(firedRecords.filter((record) => record?.state !== 'fired')).toEqual([]);
      expect(
        pausedRecords.filter(
          (record) => record?.state !== 'skipped' || record.reason !== 'the schedule is paused',
        ),
      ).toEqual([]);
      expect(firedRecords.length, 'no tick fired after the freeze').toBeGreaterThanOrEqual(5);
      const fired = firedRecords.map((record) => record?.plan ?? '');
      await checkPlans(env.zkPlan, env.parent, fired, 60_000 * TIMING);
      // The plans under the parent are exactly the fired ticks' (a woken firer would add one of its own, or tasks to one).
      const plans = ((await env.zkPlan.zk.tryGetChildren(env.parent))?.children ?? [])
        .filter(isPlanName)
        .map((name) => `${env.parent}/${name}`);
      expect(plans.sort()).toEqual(fired.sort());
      expect(
        frozen!.alive,
        `the resumed scheduler exited (${JSON.stringify(frozen!.exit)}); it printed:\n${frozen!.output}`,
      ).toBe(true);
      await env.zkPlan.schedules(SCHEDULES).remove(NAME);
      console.log(
        `schedule SIGSTOP: froze pid ${frozen!.pid} while firing, ${frozenAt - stored.activeSince} ms in, for ${SESSION_TIMEOUT_MS + 3_000} ms; ${fired.length} ticks fired, one plan each`,
      );
    },
  );

  it(
    "overlap 'skip': a plan longer than the period makes the ticks while it runs skipped, and runs never overlap",
    { timeout: 60_000 * TIMING },
    async () => {
      const env = await faults.start({
        name: 'schedule-overlap',
        tickTimeMs: TICK_MS,
        workers: { loops: 2, sessionTimeoutMs: SESSION_TIMEOUT_MS },
      });
      await startSchedulers(env, 2);
      const slow = pulse(env.parent, { overlap: 'skip' });
      const spec = {
        tasks: {
          ...slow.spec.tasks,
          load: { fn: 'work', params: [{ label: { $param: 'firedAt' }, ms: 2_300, add: 1 }] },
        },
      };
      const stored = await env.zkPlan.schedules(SCHEDULES).put({ ...slow, spec });
      await new Promise((resolve) => setTimeout(resolve, 8_500));
      await env.zkPlan.schedules(SCHEDULES).pause(NAME);
      const ticks = await settledTicks(
        env.zkPlan,
        stored.activeSince + 8_000,
        Date.now() + 30_000 * TIMING,
      );
      const states = [...ticks.values()].map((record) => record.state);
      expect(states.filter((state) => state === 'fired').length).toBeGreaterThanOrEqual(2);
      expect(states.filter((state) => state === 'skipped').length).toBeGreaterThanOrEqual(3);
      // From the functions' own log: no run of a plan starts before the previous plan's last run ended.
      const runs = env.log().filter((entry) => entry.event === 'start' || entry.event === 'end');
      const byPlan = new Map<string, { first: number; last: number }>();
      for (const entry of runs) {
        const plan = entry.task.slice(0, entry.task.lastIndexOf('/'));
        const span = byPlan.get(plan) ?? { first: entry.at, last: entry.at };
        byPlan.set(plan, {
          first: Math.min(span.first, entry.at),
          last: Math.max(span.last, entry.at),
        });
      }
      const spans = [...byPlan.values()].sort((a, b) => a.first - b.first);
      for (let index = 1; index < spans.length; index++)
        expect(spans[index]!.first).toBeGreaterThanOrEqual(spans[index - 1]!.last);
      console.log(`overlap skip: ticks ${states.join(' ')}`);
    },
  );

  for (const [misfire, fired] of [
    ['fireAll', 5],
    ['fireOnce', 1],
    ['skip', 0],
  ] as const) {
    it(
      `misfire '${misfire}' after every scheduler was down for 5 ticks: ${fired} of them fire`,
      { timeout: 60_000 * TIMING },
      async () => {
        const env = await faults.start({
          name: `schedule-misfire-${misfire}`,
          tickTimeMs: TICK_MS,
        });
        const stored = await env.zkPlan
          .schedules(SCHEDULES)
          .put(pulse(env.parent, { misfire, misfireGraceMs: 200 }));
        const fifth = Math.floor(stored.activeSince / 1000) * 1000 + 5_000;
        await pauseUntil(fifth + 600); // no scheduler runs through ticks 1…5
        const scheduler = env.zkPlan.startScheduler(SCHEDULES);
        try {
          const ticks = await settledTicks(env.zkPlan, fifth, Date.now() + 20_000 * TIMING);
          const states = [...ticks.entries()]
            .filter(([tick]) => tick <= fifth)
            .map(([, record]) => record.state);
          expect(states.filter((state) => state === 'fired')).toHaveLength(fired);
          const [summary] = await env.zkPlan.schedules(SCHEDULES).list();
          expect(summary?.skippedTicks).toBeGreaterThanOrEqual(5 - fired);
        } finally {
          await scheduler.stop();
        }
      },
    );
  }
});
