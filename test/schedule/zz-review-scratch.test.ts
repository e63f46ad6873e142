import { PlanControl } from '../../src/control/plan-control.js';
import { PlanReader } from '../../src/plan/plan-reader.js';
import { PlanWriter } from '../../src/plan/plan-writer.js';
import { Scheduler } from '../../src/schedule/scheduler.js';
import { Scheduling } from '../../src/schedule/scheduling.js';
import { TaskStore } from '../../src/store/task-store.js';
import { memoryProcess } from '../support/memory-plan.js';
import { tickFunctions } from './schedule-harness.js';
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryZooKeeper } from '../../src/testing/index.js';
import type { MemoryProcess } from '../support/memory-plan.js';
import { PLANS, T0, TICK_SPEC, plansOn, schedulerProcess, type SchedulerProcess } from './schedule-harness.js';

const open: MemoryProcess[] = [];

function procFor(server: MemoryZooKeeper, name: string, parent: string, now: number) {
  const functions = tickFunctions();
  const proc = memoryProcess(server, name, functions);
  open.push(proc);
  const { zk } = proc;
  const store = new TaskStore(zk);
  const clock = { now };
  const scheduling = new Scheduling({
    now: () => clock.now, zk, writer: new PlanWriter(zk, store, functions), reader: new PlanReader(zk, store),
    control: new PlanControl(zk, store), functions, events: proc.zkPlan, identity: name, wake: () => undefined,
  });
  const errors: unknown[] = [];
  const scheduler = new Scheduler({ firing: scheduling.firingContext(parent), pollMs: 1000, now: () => clock.now, onError: (e) => errors.push(e) });
  return { ...proc, clock, scheduler, schedules: scheduling.schedules(parent), errors };
}
afterEach(async () => {
  await Promise.all(open.splice(0).map(({ zkPlan }) => zkPlan.close()));
});
function start(server: MemoryZooKeeper, name: string): SchedulerProcess {
  const proc = schedulerProcess(server, name);
  open.push(proc);
  return proc;
}

describe('review', () => {
  it("D: overlap 'skip' — pruning the fired tick's record lets a second run start while the first is unfinished", async () => {
    const server = new MemoryZooKeeper();
    const proc = start(server, 'a');
    // every 15 s, a run that never finishes (no workers); defaults: keepTicks 50, keepTicksMs 10 min
    await proc.schedules.put({ name: 'pulse', cron: '*/15 * * * * *', spec: TICK_SPEC, planParent: PLANS, overlap: 'skip', misfire: 'fireAll' });
    for (let t = 15_000; t <= 52 * 15_000 + 20; t += 15_000) {
      proc.clock.now = T0 + t + 20;
      await proc.scheduler.pass();
    }
    const [summary] = await proc.schedules.list();
    console.log('states (newest first):', summary?.recentRuns.map((r) => `${r.state}:${r.outcome ?? ''}`).join(' '));
    const plans = plansOn(server);
    console.log('plans:', plans);
    for (const p of plans) console.log(p, (await proc.zkPlan.planStatus(`${PLANS}/${p}`)).state);
    expect(plans, 'overlap skip: only the first run should exist while it is unfinished').toHaveLength(1);
  });
  it('C: two schedules parents, same schedule name and planParent: one tick plan path for both', async () => {
    const server = new MemoryZooKeeper();
    const a = procFor(server, 'a', '/team-a/schedules', T0);
    const b = procFor(server, 'b', '/team-b/schedules', T0);
    const def = { name: 'nightly', cron: '* * * * * *', spec: TICK_SPEC, planParent: PLANS, overlap: 'allow', misfire: 'fireAll' } as const;
    await a.schedules.put(def);
    await b.schedules.put(def);
    a.clock.now = b.clock.now = T0 + 1_020;
    await a.scheduler.pass();
    await b.scheduler.pass();
    const [sa] = await a.schedules.list();
    const [sb] = await b.schedules.list();
    console.log('A runs', sa?.recentRuns, 'B runs', sb?.recentRuns);
    console.log('plans', plansOn(server), a.errors, b.errors);
    expect(plansOn(server), 'each schedule should get its own run').toHaveLength(2);
  });

  it('C2: same collision, both firing at once: one plan gets torn by two firers', async () => {
    const server = new MemoryZooKeeper();
    const a = procFor(server, 'a', '/team-a/schedules', T0);
    const b = procFor(server, 'b', '/team-b/schedules', T0);
    const def = { name: 'nightly', cron: '* * * * * *', spec: TICK_SPEC, planParent: PLANS, overlap: 'allow', misfire: 'fireAll' } as const;
    await a.schedules.put(def);
    await b.schedules.put(def);
    a.clock.now = b.clock.now = T0 + 1_020;
    for (let i = 0; i < 3; i++) await Promise.all([a.scheduler.pass(), b.scheduler.pass()]);
    const plans = plansOn(server);
    const plan = `${PLANS}/${plans[0]}`;
    console.log('plans', plans, 'errors', [...a.errors, ...b.errors].map((e) => String(e)));
    console.log(server.dump(plan));
    const tasks = server.children(plan).filter((c) => c.startsWith('task-'));
    expect(tasks).toHaveLength(2);
  });
});
