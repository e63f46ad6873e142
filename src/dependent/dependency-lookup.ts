/**
 * The reads of a dependent task: how the awaited plan stands, or, for a schedule's run, the
 * schedule, its tick at or before the moment named, the tick's record and its plan.
 */
import { PlanNotFoundError } from '../errors/plan-errors.js';
import type { PlanStatus } from '../plan/plan-status.js';
import { cronTimes } from '../schedule/cron-times.js';
import { ScheduleStore } from '../schedule/schedule-store.js';
import { cronTickId, planPathForTick } from '../schedule/tick-record.js';
import { READY, childPath, nameOf } from '../zk/layout.js';
import type { Zk } from '../zk/zk.js';
import type { DependencySeen, PlanSeen } from './dependency-decision.js';
import type { CheckedTarget } from './dependency-target.js';

export class DependencyLookup {
  constructor(
    private readonly zk: Zk,
    private readonly planStatus: (plan: string) => Promise<PlanStatus>,
  ) {}

  async see(target: CheckedTarget): Promise<DependencySeen> {
    if (target.kind === 'plan')
      return { kind: 'plan', plan: target.plan, seen: await this.seePlan(target.plan) };
    const { schedule: name, at } = target;
    const store = new ScheduleStore(this.zk, target.schedules);
    const read = await store.read(name);
    // Ticks in (-1, at]: a tick at the epoch itself counts too.
    if (read === undefined || read.schedule.removing === true)
      return { kind: 'tick', schedule: name, at, scheduleMissing: true };
    const { schedule } = read;
    const [tick] = cronTimes(schedule.cron, schedule.timezone, `schedule "${name}"`).latestIn(
      -1,
      at,
      1,
    ).ticks;
    if (tick === undefined) return { kind: 'tick', schedule: name, at };
    const id = cronTickId(tick);
    const plan = planPathForTick(schedule.planParent, name, id);
    const [record, seen] = await Promise.all([store.readTick(name, id), this.seePlan(plan)]);
    return {
      kind: 'tick',
      schedule: name,
      at,
      tick,
      plan,
      seen,
      ...(record === undefined
        ? {}
        : {
            record: {
              state: record.record.state,
              ...(record.record.reason === undefined ? {} : { reason: record.record.reason }),
            },
          }),
    };
  }

  private async seePlan(plan: string): Promise<PlanSeen> {
    try {
      // A plan not readied yet is still being built, whatever its tasks say (its status would read
      // "completed" with no task left); a node that is no plan has no `ready` either.
      if ((await this.zk.exists(childPath(plan, READY))) === undefined)
        return (await this.zk.exists(plan)) === undefined
          ? { exists: false }
          : { exists: true, state: 'building', done: 0, total: 0, failed: [] };
      const status = await this.planStatus(plan);
      return {
        exists: true,
        state: status.state,
        done: status.counts.done,
        total: status.counts.total,
        failed: status.failed.map((failed) => failed.key ?? nameOf(failed.task)),
      };
    } catch (error) {
      if (error instanceof PlanNotFoundError) return { exists: false };
      throw error;
    }
  }
}
