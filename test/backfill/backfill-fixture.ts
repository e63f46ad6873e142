/** What the backfill tests share: the schedule's past ticks, functions that count runs, and scheduler passes until a backfill is finished. */
import type { BackfillStatus } from '../../src/backfill/backfill-options.js';
import { FunctionRegistry } from '../../src/exec/function-registry.js';
import type { TaskContext } from '../../src/exec/task-context.js';
import { pause } from '../support/memory-plan.js';
import { T0, type SchedulerProcess } from '../schedule/schedule-harness.js';

/** The plan name a tick of the schedule `pulse` at `ms` makes. */
export function planOf(ms: number): string {
  return `pulse@${new Date(ms).toISOString().replace(/[-:]/g, '')}`;
}

/** A range of past ticks a minute before T0: `count` of them, a second apart, from 10 s past T0 − 60 s. */
export function pastTicks(count: number): {
  readonly from: number;
  readonly to: number;
  readonly plans: readonly string[];
} {
  const from = T0 - 60_000 + 10_000;
  return {
    from,
    to: from + (count - 1) * 1_000,
    plans: Array.from({ length: count }, (_, index) => planOf(from + index * 1_000)),
  };
}

/**
 * The tick functions (`stamp`, as tickFunctions), counting how often each past tick's first task
 * ran and how many past ticks' plans were under way at once, as their tasks see it: a plan is under
 * way from the start of its first task (`load`, whose param is the tick's time) to the end of its
 * last (`report`, whose input carries that time). Each task takes a few ms, so plans that may
 * overlap do.
 */
export class TickRuns {
  private readonly active = new Set<string>();
  /** The most past ticks' plans under way at once. */
  most = 0;
  /** Runs of each past tick's first task, by the tick's time (ISO-8601). */
  readonly loads = new Map<string, number>();

  functions(): FunctionRegistry {
    return new FunctionRegistry().register(
      'stamp',
      async (ctx: TaskContext<unknown[]>, ...inputs: unknown[]) => {
        const param = String(ctx.params[0]);
        const firedAt = param === 'report' ? (String(inputs[0]).split('<')[0] ?? '') : param;
        const past = Date.parse(firedAt) < T0;
        if (past && param !== 'report') {
          this.loads.set(firedAt, (this.loads.get(firedAt) ?? 0) + 1);
          this.active.add(firedAt);
          this.most = Math.max(this.most, this.active.size);
        }
        await pause(3);
        if (past && param === 'report') this.active.delete(firedAt);
        return [param, ...inputs].join('<');
      },
    );
  }
}

/** The backfill `id` of `pulse` as `proc` reads it; undefined when there is none. */
export async function backfillOf(
  proc: SchedulerProcess,
  id: string,
): Promise<BackfillStatus | undefined> {
  return (await proc.schedules.backfills('pulse')).find((backfill) => backfill.id === id);
}

/**
 * Passes of every scheduler, a second of their clock apart from T0 (live ticks fire too, unless
 * the schedule is paused), until the backfill is finished: resolves its final status, or undefined
 * when it is not finished after 200 passes.
 */
export async function passUntilFinished(
  schedulers: readonly SchedulerProcess[],
  id: string,
): Promise<BackfillStatus | undefined> {
  for (let second = 1; second <= 200; second++) {
    for (const proc of schedulers) proc.clock.now = T0 + second * 1_000 + 20;
    await Promise.all(schedulers.map((proc) => proc.scheduler.pass()));
    const status = await backfillOf(schedulers[0] as SchedulerProcess, id);
    if (status !== undefined && status.state !== 'running' && status.running.length === 0)
      return status;
    await pause(5); // the workers run the plans meanwhile
  }
  return undefined;
}
