import { afterEach, describe, expect, it } from 'vitest';
import { MemoryZooKeeper } from '../../src/testing/index.js';
import { readSpecRecord } from '../../src/spec/spec-record.js';
import { cronTickId } from '../../src/schedule/tick-record.js';
import { DEFAULTS } from '../../src/config/defaults.js';
import { READY, nameOf, scheduleNodes } from '../../src/zk/layout.js';
import { FAST_BACKOFF, memoryProcess, type MemoryProcess } from '../support/memory-plan.js';
import {
  PLANS,
  SCHEDULES,
  T0,
  TICK_SPEC,
  plansOn,
  schedulerProcess,
  tickFunctions,
  type SchedulerProcess,
} from './schedule-harness.js';

const open: MemoryProcess[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map(({ zkPlan }) => zkPlan.close()));
});

function start(server: MemoryZooKeeper, name: string): SchedulerProcess {
  const proc = schedulerProcess(server, name);
  open.push(proc);
  return proc;
}

function workers(server: MemoryZooKeeper): MemoryProcess {
  const proc = memoryProcess(server, 'workers', tickFunctions());
  open.push(proc);
  proc.zkPlan.startWorkers(PLANS, { count: 2, backoff: FAST_BACKOFF, retention: false });
  return proc;
}

const everySecond = {
  name: 'pulse',
  cron: '* * * * * *',
  spec: TICK_SPEC,
  planParent: PLANS,
  misfire: 'fireAll',
  misfireGraceMs: 500,
  overlap: 'allow',
} as const;

describe('Scheduler', () => {
  it('three schedulers passing at once make exactly one plan per tick, each readied and run', async () => {
    const server = new MemoryZooKeeper();
    const all = [start(server, 'a'), start(server, 'b'), start(server, 'c')];
    await all[0]?.schedules.put(everySecond);
    const runner = workers(server);
    for (let second = 1; second <= 6; second++) {
      for (const proc of all) proc.clock.now = T0 + second * 1000 + 20;
      await Promise.all(all.map((proc) => proc.scheduler.pass()));
    }
    const plans = plansOn(server);
    expect(plans).toEqual(
      [1, 2, 3, 4, 5, 6].map(
        (s) => `pulse@${new Date(T0 + s * 1000).toISOString().replace(/[-:]/g, '')}`,
      ),
    );
    expect(all.flatMap((proc) => proc.fired).sort()).toEqual(
      [1, 2, 3, 4, 5, 6].map((s) => cronTickId(T0 + s * 1000)),
    );
    for (const name of plans) {
      const plan = `${PLANS}/${name}`;
      await runner.zkPlan.waitForCompletion(plan, { timeoutMs: 10_000 });
      const record = await readSpecRecord(runner.zk, plan);
      expect(record?.origin).toMatchObject({ schedule: 'pulse', schedules: '/schedules' });
      expect(await runner.zkPlan.getResult(record?.tasks['report'] as string)).toBe(
        `report<${record?.origin?.firedAt}`,
      );
    }
    expect(all.flatMap((proc) => proc.errors)).toEqual([]);
  });

  it('a clock that jumps back fires nothing twice; one that jumps forward fires the ticks it passes once', async () => {
    const server = new MemoryZooKeeper();
    const proc = start(server, 'a');
    await proc.schedules.put(everySecond);
    proc.clock.now = T0 + 3_020;
    await proc.scheduler.pass();
    proc.clock.now = T0 + 1_020; // back
    await proc.scheduler.pass();
    expect(plansOn(server)).toHaveLength(3);
    proc.clock.now = T0 + 6_020; // forward
    await proc.scheduler.pass();
    await proc.scheduler.pass();
    expect(plansOn(server)).toHaveLength(6);
  });

  it("overlap 'skip' records a tick as skipped while the previous run is unfinished", async () => {
    const server = new MemoryZooKeeper();
    const proc = start(server, 'a');
    await proc.schedules.put({ ...everySecond, overlap: 'skip' }); // no workers: the first run never finishes
    for (let second = 1; second <= 3; second++) {
      proc.clock.now = T0 + second * 1000 + 20;
      await proc.scheduler.pass();
    }
    const [summary] = await proc.schedules.list();
    expect(summary?.recentRuns.map((run) => run.state)).toEqual(['skipped', 'skipped', 'fired']);
    expect(summary?.recentRuns[0]?.reason).toMatch(/previous run .*pulse@.* has not finished/);
    expect(plansOn(server)).toHaveLength(1);
  });

  it("overlap 'cancelPrevious' cancels the unfinished previous run, then fires", async () => {
    const server = new MemoryZooKeeper();
    const proc = start(server, 'a');
    await proc.schedules.put({ ...everySecond, overlap: 'cancelPrevious' }); // no workers: a run never finishes by itself
    for (let second = 1; second <= 2; second++) {
      proc.clock.now = T0 + second * 1000 + 20;
      await proc.scheduler.pass();
    }
    const [summary] = await proc.schedules.list();
    expect(summary?.recentRuns.map((run) => [run.state, run.outcome])).toEqual([
      ['fired', 'running'],
      ['fired', 'cancelled'],
    ]);
    const status = await proc.zkPlan.plans.status(summary?.recentRuns[1]?.plan as string);
    expect(status.control?.reason).toMatch(/overlap: .*pulse@.* fired by schedule "pulse"/);
  });

  it("overlap 'skip' counts manual runs: a finished manual run does not hide an unfinished cron run, and an unfinished manual run holds back cron ticks", async () => {
    const server = new MemoryZooKeeper();
    const proc = start(server, 'a');
    await proc.schedules.put({ ...everySecond, overlap: 'skip' }); // no workers: no run finishes by itself
    proc.clock.now = T0 + 1_020;
    await proc.scheduler.pass(); // cron run 1, unfinished
    proc.clock.now = T0 + 1_500;
    const manual = await proc.schedules.trigger('pulse'); // fires whatever the policy
    expect(manual.state).toBe('fired');
    await proc.zkPlan.plans.delete(manual.plan); // the manual run is over: the newest run is finished, cron run 1 is not
    proc.clock.now = T0 + 2_020;
    await proc.scheduler.pass();
    let [summary] = await proc.schedules.list();
    expect(summary?.recentRuns.map((run) => [run.kind, run.state])).toEqual([
      ['cron', 'skipped'],
      ['manual', 'fired'],
      ['cron', 'fired'],
    ]);
    const cronRun = summary?.recentRuns[2]?.plan as string;
    expect(summary?.recentRuns[0]?.reason).toBe(
      `overlap: the previous run ${cronRun} has not finished`,
    );

    // Cron run 1 goes; a manual run that has not finished holds back the next tick, whenever it was triggered.
    await proc.zkPlan.plans.delete(cronRun);
    const unfinished = await proc.schedules.trigger('pulse');
    proc.clock.now = T0 + 3_020;
    await proc.scheduler.pass();
    [summary] = await proc.schedules.list();
    expect(summary?.recentRuns[0]).toMatchObject({
      kind: 'cron',
      state: 'skipped',
      reason: `overlap: the previous run ${unfinished.plan} has not finished`,
    });
  });

  it("keeps the record of a manual run still under way past the tick records' retention, so that it keeps holding back cron ticks", async () => {
    const server = new MemoryZooKeeper();
    const proc = start(server, 'a');
    await proc.schedules.put({ ...everySecond, overlap: 'skip' }); // no workers: the manual run never finishes
    proc.clock.now = T0 + 500;
    const manual = await proc.schedules.trigger('pulse');
    for (let second = 1; second <= DEFAULTS.schedule.keepTicks + 10; second++) {
      proc.clock.now = T0 + second * 1000 + 20;
      await proc.scheduler.pass();
    }
    proc.clock.now = T0 + DEFAULTS.schedule.keepTicksMs + 120_020; // older records are now beyond keepTicks and keepTicksMs
    await proc.scheduler.pass();
    await proc.scheduler.pass();
    const { ticks } = scheduleNodes(SCHEDULES, 'pulse');
    const records = server.children(ticks);
    expect(records.length).toBeLessThan(DEFAULTS.schedule.keepTicks + 20); // pruning ran
    expect(records).toContain(manual.tick);
    const [summary] = await proc.schedules.list();
    expect(summary?.recentRuns[0]).toMatchObject({
      kind: 'cron',
      state: 'skipped',
      reason: `overlap: the previous run ${manual.plan} has not finished`,
    });
    expect(plansOn(server)).toEqual([nameOf(manual.plan)]);
  });

  it("keeps, under 'skip', the record of a run fired under 'allow' and still under way, though a newer run has finished", async () => {
    const server = new MemoryZooKeeper();
    const proc = start(server, 'a');
    await proc.schedules.put({ ...everySecond, overlap: 'allow' }); // no workers: run 1 never finishes
    for (let second = 1; second <= 2; second++) {
      proc.clock.now = T0 + second * 1000 + 20;
      await proc.scheduler.pass();
    }
    const [first, second] = plansOn(server) as [string, string];
    await proc.zkPlan.plans.delete(`${PLANS}/${second}`); // the newest run is over; the first is not
    await proc.schedules.put({ ...everySecond, overlap: 'skip' });
    for (let tick = 3; tick <= DEFAULTS.schedule.keepTicks + 10; tick++) {
      proc.clock.now = T0 + tick * 1000 + 20;
      await proc.scheduler.pass();
    }
    proc.clock.now = T0 + DEFAULTS.schedule.keepTicksMs + 120_020; // run 1's record is now beyond keepTicks and keepTicksMs
    await proc.scheduler.pass();
    await proc.scheduler.pass();
    const records = server.children(scheduleNodes(SCHEDULES, 'pulse').ticks);
    expect(records.length).toBeLessThan(DEFAULTS.schedule.keepTicks + 20); // pruning ran
    expect(records).toContain(cronTickId(T0 + 1_000));
    const [summary] = await proc.schedules.list();
    expect(summary?.recentRuns[0]).toMatchObject({
      kind: 'cron',
      state: 'skipped',
      reason: `overlap: the previous run ${PLANS}/${first} has not finished`,
    });
    expect(plansOn(server)).toEqual([first]);
  });

  it("a trigger and the scheduler's pass in one process (one session) never fire one tick at once: each manual plan is whole", async () => {
    const server = new MemoryZooKeeper();
    const proc = start(server, 'a');
    await proc.schedules.put({ ...everySecond, paused: true }); // only manual ticks
    const outcomes: string[] = [];
    for (let round = 0; round < 20; round++) {
      // The pass finds the trigger's record pending and fires it too, on the same session, unless the lock tells the two apart.
      const [triggered] = await Promise.all([
        proc.schedules.trigger('pulse'),
        proc.scheduler.pass(),
        proc.scheduler.pass(),
      ]);
      outcomes.push(triggered.state);
    }
    await proc.scheduler.pass(); // finishes a tick the trigger found held by the pass
    const plans = plansOn(server);
    expect(plans).toHaveLength(20);
    for (const name of plans) {
      const plan = `${PLANS}/${name}`;
      expect(server.exists(`${plan}/ready`), plan).toBe(true);
      expect(
        server.children(plan).filter((child) => child.startsWith('task-')),
        plan,
      ).toHaveLength(2);
    }
    expect(proc.errors).toEqual([]);
    for (const state of outcomes) expect(['fired', 'held-elsewhere']).toContain(state);
  });

  it("misfire after 5 ticks with no scheduler: 'fireAll' fires each, 'fireOnce' one, 'skip' none", async () => {
    for (const [misfire, expected] of [
      ['fireAll', 5],
      ['fireOnce', 1],
      ['skip', 0],
    ] as const) {
      const server = new MemoryZooKeeper();
      const proc = start(server, misfire);
      await proc.schedules.put({ ...everySecond, misfire });
      proc.clock.now = T0 + 5_900;
      await proc.scheduler.pass();
      expect(plansOn(server), misfire).toHaveLength(expected);
      const [summary] = await proc.schedules.list();
      expect(summary?.skippedTicks, misfire).toBe(5 - expected);
    }
  });

  it("a tick whose plan path another schedules' parent took is recorded failed, and that plan is left alone", async () => {
    const server = new MemoryZooKeeper();
    const proc = start(server, 'a');
    const other = schedulerProcess(server, 'b', T0, '/other-schedules');
    open.push(other);
    await proc.schedules.put(everySecond);
    await other.schedules.put(everySecond);
    other.clock.now = T0 + 1_020;
    await other.scheduler.pass();
    proc.clock.now = T0 + 1_020;
    await proc.scheduler.pass();
    const [summary] = await proc.schedules.list();
    expect(summary?.recentRuns[0]).toMatchObject({
      state: 'failed',
      reason: expect.stringContaining('is taken by /other-schedules/pulse'),
    });
    expect(plansOn(server)).toHaveLength(1);
  });

  it('pause fires nothing; resume fires from the next tick on, not the ticks that passed', async () => {
    const server = new MemoryZooKeeper();
    const proc = start(server, 'a');
    await proc.schedules.put(everySecond);
    await proc.schedules.pause('pulse');
    proc.clock.now = T0 + 3_020;
    await proc.scheduler.pass();
    expect(plansOn(server)).toEqual([]);
    await proc.schedules.resume('pulse');
    proc.clock.now = T0 + 4_020;
    await proc.scheduler.pass();
    expect(plansOn(server)).toEqual([
      `pulse@${new Date(T0 + 4000).toISOString().replace(/[-:]/g, '')}`,
    ]);
  });

  it('holds one watch on the schedules and one per schedule however many passes it makes (none after a removal)', async () => {
    const server = new MemoryZooKeeper();
    const proc = start(server, 'a');
    await proc.schedules.put(everySecond);
    await proc.schedules.put({ ...everySecond, name: 'other' });
    for (let second = 1; second <= 20; second++) {
      proc.clock.now = T0 + second * 1000 + 20;
      await proc.scheduler.pass();
    }
    expect(server.watchCount('/schedules')).toBe(3);
    expect(await proc.schedules.remove('other')).toBe(true);
    expect(await proc.schedules.remove('other')).toBe(false); // nothing there any more: the CLI says SCHEDULE_NOT_FOUND
    for (let pass = 0; pass < 5; pass++) await proc.scheduler.pass();
    expect(server.watchCount('/schedules')).toBe(2);
  });

  it('trigger runs now, also while paused, and list shows the run with its outcome', async () => {
    const server = new MemoryZooKeeper();
    const proc = start(server, 'a');
    const runner = workers(server);
    await proc.schedules.put({ ...everySecond, paused: true });
    const { plan, state } = await proc.schedules.trigger('pulse');
    expect(state).toBe('fired');
    await runner.zkPlan.waitForCompletion(plan, { timeoutMs: 10_000 });
    const [summary] = await proc.schedules.list();
    expect(summary?.nextFireTimes).toEqual([]);
    expect(summary?.recentRuns[0]).toMatchObject({
      kind: 'manual',
      state: 'fired',
      plan,
      outcome: 'completed',
    });
  });
});

describe('Scheduler: a firer that dies or freezes at any write', () => {
  /** How many writes one undisturbed firing of TICK_SPEC takes. */
  async function writesOfOneFiring(): Promise<number> {
    const server = new MemoryZooKeeper();
    const proc = start(server, 'a');
    await proc.schedules.put(everySecond);
    let writes = 0;
    server.onApplied = (event) => {
      if (
        event.clientName === 'a' &&
        event.ok &&
        ['create', 'setData', 'delete'].includes(event.op)
      )
        writes += 1;
    };
    proc.clock.now = T0 + 1_020;
    await proc.scheduler.pass();
    expect(plansOn(server)).toHaveLength(1);
    await Promise.all(open.splice(0).map(({ zkPlan }) => zkPlan.close()));
    return writes;
  }

  // crash: dies, its session expires. freeze: cut off while its session expires, then back on a new
  // one, going on where it stopped. expire: its session expires between two writes and it goes on at once on a new one.
  for (const fault of ['crash', 'freeze', 'expire'] as const) {
    it(`${fault} after each write: another scheduler finishes the tick with one whole plan, and the ${fault === 'crash' ? 'dead' : 'woken'} one adds nothing`, async () => {
      const writes = await writesOfOneFiring();
      expect(writes).toBeGreaterThan(15);
      for (let n = 1; n <= writes; n++) {
        const server = new MemoryZooKeeper();
        const a = start(server, 'a');
        const b = start(server, 'b');
        await a.schedules.put(everySecond);
        let seen = 0;
        server.onApplied = (event) => {
          if (
            event.clientName !== 'a' ||
            !event.ok ||
            !['create', 'setData', 'delete'].includes(event.op)
          )
            return;
          seen += 1;
          if (seen !== n) return;
          if (fault === 'crash') a.zk.crash();
          else if (fault === 'freeze') a.zk.disconnect();
          server.expireSession(event.sessionId);
        };
        a.clock.now = b.clock.now = T0 + 1_020;
        const aPass = a.scheduler.pass().catch(() => undefined);
        await new Promise((resolve) => setTimeout(resolve, 5));
        await b.scheduler.pass();
        await b.scheduler.pass();
        if (fault === 'freeze') {
          a.zk.reconnect(); // wakes on a new session and goes on where it stopped
          await aPass;
          await a.scheduler.pass();
        }
        const plans = plansOn(server);
        expect(plans, `${fault} after write ${n}`).toHaveLength(1);
        const plan = `${PLANS}/${plans[0]}`;
        const tasks = server.children(plan).filter((child) => child.startsWith('task-'));
        expect(tasks, `${fault} after write ${n}: ${server.dump(plan)}`).toHaveLength(2);
        expect(server.exists(`${plan}/ready`), `${fault} after write ${n}`).toBe(true);
        const runner = workers(server);
        await runner.zkPlan.waitForCompletion(plan, { timeoutMs: 10_000 });
        const record = await readSpecRecord(runner.zk, plan);
        expect(await runner.zkPlan.getResult(record?.tasks['report'] as string)).toBe(
          `report<${record?.origin?.firedAt}`,
        );
        await Promise.all(open.splice(0).map(({ zkPlan }) => zkPlan.close()));
      }
    });
  }
});

describe('overlap: the earlier runs a cron tick looks at', () => {
  it('a manual run whose plan is ready but whose record is still pending (trigger in flight, or its process stalled) holds back a cron tick', async () => {
    const server = new MemoryZooKeeper();
    const a = start(server, 'a'); // the scheduler
    const b = start(server, 'b'); // a `zk-plan schedule trigger` call
    await a.schedules.put({ ...everySecond, overlap: 'skip' }); // no workers: no run finishes
    // b's trigger readies its plan, then stalls before its record says `fired` (a lost reply being resent, a GC pause, a crash: its lock stays until its session goes).
    const setData = b.zk.setData.bind(b.zk);
    b.zk.setData = ((path: string, data: Buffer, ...rest: unknown[]) => {
      if (path.includes('/ticks/manual-') && data.toString().includes('"fired"'))
        return new Promise(() => undefined);
      return (setData as (...args: unknown[]) => unknown)(path, data, ...rest);
    }) as typeof b.zk.setData;
    b.clock.now = T0 + 1_010;
    void b.schedules.trigger('pulse');
    await expect
      .poll(() =>
        plansOn(server)
          .flatMap((name) => server.children(`${PLANS}/${name}`))
          .includes(READY),
      )
      .toBe(true);
    const [manualPlan] = plansOn(server);
    expect(manualPlan).toMatch(/manual/);
    // The scheduler's pass for the tick at T0+1000 (due before the trigger, recorded after it).
    a.clock.now = T0 + 1_020;
    await a.scheduler.pass();
    const [summary] = await a.schedules.list();
    const cron = summary?.recentRuns.find((run) => run.kind === 'cron');
    expect(plansOn(server)).toEqual([manualPlan]); // the manual run is under way: the cron run must not start
    expect(cron).toMatchObject({ state: 'skipped' });
  });

  it('after a change from allow to skip, an older unfinished cron run (not the newest) still holds back cron ticks', async () => {
    const server = new MemoryZooKeeper();
    const a = start(server, 'a');
    await a.schedules.put({ ...everySecond, overlap: 'allow' }); // no workers: no run finishes by itself
    for (let second = 1; second <= 2; second++) {
      a.clock.now = T0 + second * 1000 + 20;
      await a.scheduler.pass();
    }
    const [first, second] = plansOn(server);
    await a.zkPlan.plans.delete(`${PLANS}/${second}`); // the newest run is over; the first is not
    await a.schedules.put({ ...everySecond, overlap: 'skip' });
    a.clock.now = T0 + 3_020;
    await a.scheduler.pass();
    expect(plansOn(server)).toEqual([first]); // the first run is still under way: tick 3 must be skipped
  });
  it("under overlap 'allow' a cron tick reads no earlier run", async () => {
    const server = new MemoryZooKeeper();
    const a = start(server, 'a');
    await a.schedules.put(everySecond); // overlap 'allow'
    a.clock.now = T0 + 500;
    for (let i = 0; i < 40; i++) await a.schedules.trigger('pulse');
    const firing = (
      a.scheduler as unknown as {
        runtime: { firing: { planFinished(plan: string): Promise<boolean> } };
      }
    ).runtime.firing;
    const planFinished = firing.planFinished.bind(firing);
    let calls = 0;
    firing.planFinished = (plan) => ((calls += 1), planFinished(plan));
    a.clock.now = T0 + 1_020;
    await a.scheduler.pass();
    expect(calls).toBe(0);
  });
});
