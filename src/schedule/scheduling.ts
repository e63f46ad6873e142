/**
 * What a ZkPlan needs for schedules: the firing context over its session, the `schedules(parent)`
 * facade, and the schedulers it started (stopped by `close()`).
 */
import type { EventEmitter } from 'node:events';
import { resolveSchedulerOptions, type SchedulerOptions } from '../config/options.js';
import type { PlanControl } from '../control/plan-control.js';
import { PlanFinishedError, PlanNotFoundError } from '../errors/plan-errors.js';
import type { FunctionRegistry } from '../exec/function-registry.js';
import type { PlanReader } from '../plan/plan-reader.js';
import type { PlanState } from '../plan/plan-states.js';
import type { PlanWriter } from '../plan/plan-writer.js';
import { listWorkers } from '../registry/worker-registry.js';
import type { ZkPlanEvents } from '../worker/worker-events.js';
import { assertValidPath } from '../zk/layout.js';
import type { Zk } from '../zk/zk.js';
import { BackfillStore } from '../backfill/backfill-store.js';
import { ScheduleStore } from './schedule-store.js';
import { Scheduler } from './scheduler.js';
import { Schedules } from './schedules.js';
import type { FiringContext } from './tick-firing.js';

export interface SchedulingParts {
  readonly zk: Zk;
  readonly writer: PlanWriter;
  readonly reader: PlanReader;
  readonly control: PlanControl;
  readonly functions: FunctionRegistry;
  readonly events: EventEmitter<ZkPlanEvents>;
  /** Who fires, as recorded with ticks (host:pid). */
  readonly identity: string;
  /** Tells this process's workers to look for work now (a plan was just readied). */
  wake(): void;
  /** The clock ticks are read by. @defaultValue Date.now */
  readonly now?: () => number;
  /**
   * The random part of a manual tick's id: 8 hex digits, telling apart the triggers of one
   * millisecond. Simulations pass a seeded one, so that a seed replays the same ticks in the same
   * order. @defaultValue 4 random bytes from node:crypto, in hex
   */
  readonly tickNonce?: () => string;
}

const FINISHED: ReadonlySet<PlanState> = new Set(['completed', 'failed', 'cancelled']);

export class Scheduling {
  private readonly running = new Set<Scheduler>();

  private readonly now: () => number;

  constructor(private readonly parts: SchedulingParts) {
    this.now = parts.now ?? (() => Date.now());
  }

  schedules(parent: string): Schedules {
    assertValidPath('parent', parent);
    return new Schedules(
      this.firingContext(parent),
      (plan) => this.planState(plan),
      this.now,
      this.parts.tickNonce,
    );
  }

  start(parent: string, options: SchedulerOptions): { stop(): Promise<void> } {
    assertValidPath('parent', parent);
    const { pollMs } = resolveSchedulerOptions(options);
    const { events } = this.parts;
    const scheduler = new Scheduler({
      firing: this.firingContext(parent),
      pollMs,
      now: this.now,
      onError: (error) =>
        events.emit('schedule:error', {
          schedules: parent,
          error: error instanceof Error ? error : new Error(String(error)),
        }),
      onTick: (schedule, tick, state, plan) => {
        if (state === 'fired') this.parts.wake();
        events.emit('schedule:tick', { schedules: parent, schedule, tick, state, plan });
      },
    });
    this.running.add(scheduler);
    scheduler.start();
    return {
      stop: async () => {
        this.running.delete(scheduler);
        await scheduler.stop();
      },
    };
  }

  async stopAll(): Promise<void> {
    const schedulers = [...this.running];
    this.running.clear();
    await Promise.all(schedulers.map((scheduler) => scheduler.stop()));
  }

  /** What firing the ticks of the schedules under `parent` takes, on this ZkPlan's session. */
  firingContext(parent: string): FiringContext {
    const { zk, writer, functions, control, identity } = this.parts;
    return {
      zk,
      writer,
      store: new ScheduleStore(zk, parent),
      backfills: new BackfillStore(zk, parent),
      functions,
      identity: `${identity}/scheduler`,
      listWorkers: (planParent) => listWorkers(zk, planParent),
      planFinished: async (plan) => {
        const state = await this.planState(plan);
        return state === 'deleted' || FINISHED.has(state);
      },
      planState: (plan) => this.planState(plan),
      cancelPlan: async (plan, reason) => {
        await control.cancel(plan, { reason }).catch((error: unknown) => {
          // Gone, or finished meanwhile: nothing left to cancel.
          if (!(error instanceof PlanNotFoundError || error instanceof PlanFinishedError))
            throw error;
        });
      },
    };
  }

  private async planState(plan: string): Promise<PlanState | 'deleted'> {
    try {
      // A cancelled plan is finished, said by its control record alone: its status would read every task's history record
      // (the cancel writes one per task), and a scheduler asks this of each earlier tick's plan on every pass.
      if ((await this.parts.reader.readControl(plan))?.state === 'cancelled') return 'cancelled';
      return (await this.parts.reader.planStatus(plan)).state;
    } catch (error) {
      if (error instanceof PlanNotFoundError) return 'deleted';
      throw error;
    }
  }
}
