import { afterEach, describe, expect, it } from 'vitest';
import { MemoryZooKeeper } from '../../src/testing/index.js';
import type { MemoryProcess } from '../support/memory-plan.js';
import { PLANS, T0, TICK_SPEC, plansOn, schedulerProcess, type SchedulerProcess } from './schedule-harness.js';

const open: MemoryProcess[] = [];
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
});
