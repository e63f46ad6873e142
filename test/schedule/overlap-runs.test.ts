/** Which earlier runs hold back a cron tick under 'skip' (and are cancelled under 'cancelPrevious'), and what that costs under 'allow'. */
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryZooKeeper } from '../../src/testing/index.js';
import { READY } from '../../src/zk/layout.js';
import type { MemoryProcess } from '../support/memory-plan.js';
import { PLANS, T0, TICK_SPEC, plansOn, schedulerProcess, type SchedulerProcess } from './schedule-harness.js';

const open: MemoryProcess[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map(({ zkPlan }) => zkPlan.close().catch(() => undefined)));
});

function start(server: MemoryZooKeeper, name: string): SchedulerProcess {
  const proc = schedulerProcess(server, name);
  open.push(proc);
  return proc;
}

const everySecond = {
  name: 'pulse',
  cron: '* * * * * *',
  spec: TICK_SPEC,
  planParent: PLANS,
  misfire: 'fireAll',
  misfireGraceMs: 500,
  overlap: 'skip',
} as const;

describe('overlap: the earlier runs a cron tick looks at', () => {
  it('a manual run whose plan is ready but whose record is still pending (trigger in flight, or its process stalled) holds back a cron tick', async () => {
    const server = new MemoryZooKeeper();
    const a = start(server, 'a'); // the scheduler
    const b = start(server, 'b'); // a `zk-plan schedule trigger` call
    await a.schedules.put(everySecond); // no workers: no run finishes
    // b's trigger readies its plan, then stalls before its record says `fired` (a lost reply being resent, a GC pause, a crash: its lock stays until its session goes).
    const setData = b.zk.setData.bind(b.zk);
    b.zk.setData = ((path: string, data: Buffer, ...rest: unknown[]) => {
      if (path.includes('/ticks/manual-') && data.toString().includes('"fired"')) return new Promise(() => undefined);
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
    await a.zkPlan.deletePlan(`${PLANS}/${second}`); // the newest run is over; the first is not
    await a.schedules.put({ ...everySecond, overlap: 'skip' });
    a.clock.now = T0 + 3_020;
    await a.scheduler.pass();
    expect(plansOn(server)).toEqual([first]); // the first run is still under way: tick 3 must be skipped
  });
  it("under overlap 'allow' a cron tick reads no earlier run", async () => {
    const server = new MemoryZooKeeper();
    const a = start(server, 'a');
    await a.schedules.put({
      name: 'pulse',
      cron: '* * * * * *',
      spec: TICK_SPEC,
      planParent: PLANS,
      misfire: 'fireAll',
      misfireGraceMs: 500,
      overlap: 'allow',
    });
    a.clock.now = T0 + 500;
    for (let i = 0; i < 40; i++) await a.schedules.trigger('pulse');
    const firing = (a.scheduler as unknown as { runtime: { firing: { planFinished(plan: string): Promise<boolean> } } }).runtime.firing;
    const planFinished = firing.planFinished.bind(firing);
    let calls = 0;
    firing.planFinished = (plan) => ((calls += 1), planFinished(plan));
    a.clock.now = T0 + 1_020;
    await a.scheduler.pass();
    expect(calls).toBe(0);
  });
});
