/**
 * `zkPlan.schedules(parent)`: put, pause, resume, trigger, remove and list the schedules under
 * one parent. Definitions are replaced with versioned writes (two processes putting at once both
 * land, one after the other); triggers fire at once in the calling process, and a tick this
 * process cannot finish is finished by any running scheduler.
 */
import { randomBytes } from 'node:crypto';
import {
  backfillStatus,
  resolveBackfillOptions,
  type BackfillOptions,
  type BackfillStatus,
} from '../backfill/backfill-options.js';
import {
  MAX_BACKFILLS,
  MAX_BACKFILL_REASON,
  backfillId,
  isBackfillId,
  type BackfillRecord,
} from '../backfill/backfill-record.js';
import { Backfiller } from '../backfill/backfiller.js';
import type { PlanState } from '../plan/plan-states.js';
import { BackfillNotFoundError, ScheduleNotFoundError } from '../errors/schedule-errors.js';
import { InvalidArgumentError } from '../errors/usage-errors.js';
import { MalformedNodeError } from '../errors/task-errors.js';
import { backfillNode, scheduleNodes } from '../zk/layout.js';
import { cronTimes } from './cron-times.js';
import { assertScheduleName } from './schedule-name.js';
import { resolveSchedule, type ScheduleInput, type StoredSchedule } from './schedule-definition.js';
import { fireTick, type FiringContext, type FireState } from './tick-firing.js';
import {
  manualTickId,
  planPathForTick,
  type TickKind,
  type TickRecord,
  type TickState,
} from './tick-record.js';

/**
 * A schedule's recent run, newest first in `list()`.
 *
 * @category Schedules
 */
export interface ScheduleRun {
  /** The tick's id (the node name under the schedule's ticks). */
  readonly tick: string;
  readonly kind: TickKind;
  /** The tick's time, ISO-8601: the spec parameter `firedAt`. */
  readonly firedAt: string;
  /** The tick's state: pending, fired, skipped or failed. */
  readonly state: TickState;
  /** The path of the plan the tick makes (or made). */
  readonly plan: string;
  /** Why the tick was skipped or failed. */
  readonly reason?: string;
  /** How the fired plan stands now (`deleted` once retention or a user removed it). */
  readonly outcome?: PlanState | 'deleted';
}

/**
 * One schedule as `list()` gives it: its definition, next fire times and recent runs.
 *
 * @category Schedules
 */
export interface ScheduleSummary {
  readonly schedule: StoredSchedule;
  /** The next fire times (none while paused), ISO-8601. */
  readonly nextFireTimes: readonly string[];
  /** The newest tick handled, and missed ticks passed over so far. */
  readonly lastTick?: string;
  readonly skippedTicks: number;
  readonly recentRuns: readonly ScheduleRun[];
  /** Its backfills, oldest first: those under way, and the newest finished ones. */
  readonly backfills: readonly BackfillStatus[];
}

/**
 * What `trigger` made: the manual tick, the plan it builds, and how far the tick got.
 *
 * @category Schedules
 */
export interface TriggeredTick {
  readonly tick: string;
  readonly plan: string;
  readonly state: FireState;
}

/** Fire times and runs `list()` shows per schedule. */
const LISTED_FIRE_TIMES = 5;
const LISTED_RUNS = 10;

/**
 * The schedules under one parent, as `zkPlan.schedules(parent)` gives them: put a schedule (cron,
 * time zone, spec, overlap and misfire policies), pause, resume, trigger or remove it, and list
 * each with its next fire times and recent runs. `zkPlan.startScheduler(parent)` fires them.
 *
 * @category Schedules
 */
export class Schedules {
  /**
   * Made by `zkPlan.schedules(parent)` on the ZkPlan's session; the firing context it takes is not public API.
   *
   * @internal
   */
  constructor(
    private readonly firing: FiringContext,
    private readonly planStateOf: (plan: string) => Promise<PlanState | 'deleted'>,
    private readonly now: () => number = Date.now,
    private readonly tickNonce: () => string = () => randomBytes(4).toString('hex'),
  ) {}

  /** The parent the schedules live under. */
  get parent(): string {
    return this.firing.store.parent;
  }

  /**
   * Creates or replaces a schedule (validated in full first, its spec too). Replacing keeps its
   * ticks; a changed cron or time zone only fires ticks from now on. A node refused on read (not
   * a valid schedule) is replaced too, as a new schedule: only ticks from now on fire.
   */
  async put(input: ScheduleInput): Promise<StoredSchedule> {
    for (;;) {
      const name = (input as { name?: unknown } | null)?.name;
      assertScheduleName(name);
      const current = await this.firing.store.read(name).catch(async (error: unknown) => {
        if (!(error instanceof MalformedNodeError)) throw error;
        return { refused: await this.firing.store.node(name) };
      });
      if (current !== undefined && 'refused' in current) {
        const stored = resolveSchedule(input, undefined, this.now(), this.firing.functions.names());
        if (await this.firing.store.write(stored, current.refused)) return stored;
        continue;
      }
      if (current?.schedule.removing === true) {
        // A removal cut off part-way: finish it, and put the schedule anew (its old cursor and records are gone).
        await this.firing.store.remove(name);
        continue;
      }
      const stored = resolveSchedule(
        input,
        current?.schedule,
        this.now(),
        this.firing.functions.names(),
      );
      if (await this.firing.store.write(stored, current)) return stored;
    }
  }

  /** The stored schedule; ScheduleNotFoundError when there is none. */
  async get(name: string): Promise<StoredSchedule> {
    assertScheduleName(name);
    const current = await this.firing.store.read(name);
    if (current === undefined || current.schedule.removing === true)
      throw new ScheduleNotFoundError(scheduleNodes(this.parent, name).node);
    return current.schedule;
  }

  /** No tick fires until resume (a tick already firing finishes). Safe to repeat. */
  pause(name: string): Promise<StoredSchedule> {
    return this.update(name, (schedule) => ({ ...schedule, paused: true }));
  }

  /** Fires again from the next tick on: ticks that passed while paused never fire. Safe to repeat. */
  resume(name: string): Promise<StoredSchedule> {
    return this.update(name, (schedule) => ({ ...schedule, paused: false }));
  }

  /**
   * Runs the schedule now (also while paused, whatever the overlap policy): a manual tick with its
   * own plan, built by this process. If this process cannot finish it (a crash, a lost session),
   * a running scheduler does.
   */
  async trigger(name: string): Promise<TriggeredTick> {
    const schedule = await this.get(name);
    const at = this.now();
    const tick = manualTickId(at, this.tickNonce());
    const plan = planPathForTick(schedule.planParent, schedule.name, tick);
    const record: TickRecord = {
      kind: 'manual',
      tick: at,
      firedAt: new Date(at).toISOString(),
      plan,
      state: 'pending',
      by: this.firing.identity,
      updatedAt: new Date().toISOString(),
    };
    // False: the schedule went, or the create landed and its reply was lost (the id is this call's own).
    if (
      !(await this.firing.store.createTick(name, tick, record)) &&
      (await this.firing.store.readTick(name, tick, { sync: true })) === undefined
    )
      throw new ScheduleNotFoundError(scheduleNodes(this.parent, name).node);
    return { tick, plan, state: (await fireTick(this.firing, schedule, tick)).state };
  }

  /**
   * Backfills the schedule (DolphinScheduler's "complement"): one plan per cron tick of the past
   * range [from, to], made through the same tick records and locks as live ticks, so a backfilled
   * tick and a live one of the same time make one plan, and a tick whose record or plan still
   * exists makes nothing new. `serial` starts each tick's plan after the previous one ended;
   * `parallel` keeps up to `concurrency` under way. Its paused state does not stop a backfill. The
   * call records the backfill and starts its first ticks; running schedulers fire them and move it
   * on (`startScheduler`, `zk-plan worker --schedules`), so one must run. Resolves its status.
   */
  async backfill(name: string, options: BackfillOptions): Promise<BackfillStatus> {
    assertScheduleName(name);
    const current = await this.firing.store.read(name);
    if (current === undefined || current.schedule.removing === true)
      throw new ScheduleNotFoundError(scheduleNodes(this.parent, name).node);
    const { schedule, czxid } = current;
    // Ticks after the cursor are the live scheduler's to decide, unless the schedule is paused (they
    // never fire then: a resume only fires ticks from then on).
    const now = this.now();
    const cursor = (await this.firing.store.cursor(name)).tick;
    const liveFrom = schedule.paused ? now : Math.max(cursor ?? 0, schedule.activeSince);
    const resolved = resolveBackfillOptions(options, schedule, now, liveFrom);
    if ((await this.firing.backfills.ids(name)).length >= MAX_BACKFILLS)
      throw new InvalidArgumentError(
        'name',
        `schedule "${name}" already holds ${MAX_BACKFILLS} backfills: wait for some to finish, or cancel some (Schedules.backfills and zk-plan schedule backfills list them)`,
        scheduleNodes(this.parent, name).backfills,
      );
    const id = backfillId(this.now(), this.tickNonce());
    const stamp = new Date().toISOString();
    const record: BackfillRecord = {
      ...resolved,
      cron: schedule.cron,
      timezone: schedule.timezone,
      started: 0,
      running: [],
      completed: 0,
      failed: 0,
      notRun: 0,
      state: 'running',
      scheduleNode: czxid,
      createdAt: stamp,
      updatedAt: stamp,
      by: this.firing.identity,
    };
    if (!(await this.firing.backfills.create(name, id, record)))
      throw new ScheduleNotFoundError(scheduleNodes(this.parent, name).node);
    const stepped = await new Backfiller(this.firing).step(schedule, czxid, id);
    return backfillStatus(name, id, stepped?.record ?? record);
  }

  /** The schedule's backfills, oldest first: those under way and the newest finished ones. */
  async backfills(name: string): Promise<BackfillStatus[]> {
    await this.get(name);
    return await this.backfillsOf(name);
  }

  /**
   * Cancels a backfill: no tick of it starts again, a tick not yet built makes no plan, and the
   * plans of its ticks under way are cancelled (by this call, or by the scheduler's next step for
   * one built meanwhile). Safe to repeat; a finished backfill is left as it is. Resolves its status.
   */
  async cancelBackfill(name: string, id: string, reason?: string): Promise<BackfillStatus> {
    const schedule = await this.get(name);
    if (typeof id !== 'string' || !isBackfillId(id))
      throw new InvalidArgumentError(
        'id',
        `expected a backfill id such as backfill-001764036000000-1a2b3c4d (Schedules.backfills and zk-plan schedule backfills list them), got ${JSON.stringify(id)}`,
      );
    if (reason !== undefined && (typeof reason !== 'string' || reason.length > MAX_BACKFILL_REASON))
      throw new InvalidArgumentError(
        'reason',
        `expected a string of at most ${MAX_BACKFILL_REASON} characters`,
      );
    const node = (await this.firing.store.node(name))?.czxid ?? 0;
    for (;;) {
      const read = await this.firing.backfills.read(name, id);
      if (read === undefined) throw new BackfillNotFoundError(backfillNode(this.parent, name, id));
      if (read.record.state !== 'running') return backfillStatus(name, id, read.record);
      const cancelled: BackfillRecord = {
        ...read.record,
        state: 'cancelled',
        reason: reason ?? 'cancelled by cancelBackfill',
        updatedAt: new Date().toISOString(),
      };
      if (!(await this.firing.backfills.update(name, read, cancelled))) continue; // moved on meanwhile
      const stepped = await new Backfiller(this.firing).step(schedule, node, id);
      return backfillStatus(name, id, stepped?.record ?? cancelled);
    }
  }

  /**
   * Removes the schedule and its tick records; the plans it made stay. Safe to repeat, and a removal
   * cut short is finished by calling it again. Resolves true when this call found the schedule (or
   * what a removal cut short left of it), false when there was none: after a lost reply, a repeat
   * answers false for a removal that did land.
   */
  async remove(name: string): Promise<boolean> {
    assertScheduleName(name);
    return await this.firing.store.remove(name);
  }

  /**
   * Every schedule (by name) with its next fire times and recent runs. One refused on read (its
   * definition or cursor not valid: MalformedNodeError, which schedulers report each pass) is left out.
   */
  async list(): Promise<ScheduleSummary[]> {
    const names = await this.firing.store.names();
    const summaries = await Promise.all(
      names.map((name) =>
        this.summary(name).catch((error: unknown) => {
          if (error instanceof MalformedNodeError) return undefined;
          throw error;
        }),
      ),
    );
    return summaries.filter((summary): summary is ScheduleSummary => summary !== undefined);
  }

  private async summary(name: string): Promise<ScheduleSummary | undefined> {
    const { store } = this.firing;
    const current = await store.read(name);
    if (current === undefined) return undefined;
    const { schedule } = current;
    const [cursor, ids] = await Promise.all([store.cursor(name), store.tickIds(name)]);
    const nextFireTimes = schedule.paused
      ? []
      : cronTimes(schedule.cron, schedule.timezone, `schedule "${name}"`)
          .nextN(Math.max(this.now(), schedule.activeSince), LISTED_FIRE_TIMES)
          .map((at) => new Date(at).toISOString());
    const runs = await Promise.all(
      ids
        .slice(-LISTED_RUNS)
        .reverse()
        .map(async (id): Promise<ScheduleRun | undefined> => {
          const tick = await store.readTick(name, id);
          if (tick === undefined) return undefined;
          const { kind, firedAt, state, plan, reason } = tick.record;
          const outcome = state === 'fired' ? { outcome: await this.planStateOf(plan) } : {};
          return {
            tick: id,
            kind,
            firedAt,
            state,
            plan,
            ...(reason === undefined ? {} : { reason }),
            ...outcome,
          };
        }),
    );
    return {
      schedule,
      backfills: await this.backfillsOf(name),
      nextFireTimes,
      ...(cursor.tick === undefined ? {} : { lastTick: new Date(cursor.tick).toISOString() }),
      skippedTicks: cursor.skipped,
      recentRuns: runs.filter((run): run is ScheduleRun => run !== undefined),
    };
  }

  /** The statuses of the schedule's backfill records (those not readable as one left out). */
  private async backfillsOf(name: string): Promise<BackfillStatus[]> {
    const reads = await Promise.all(
      (await this.firing.backfills.ids(name)).map((id) =>
        this.firing.backfills.read(name, id).catch((error: unknown) => {
          if (error instanceof MalformedNodeError) return undefined;
          throw error;
        }),
      ),
    );
    return reads.flatMap((read) =>
      read === undefined ? [] : [backfillStatus(name, read.id, read.record)],
    );
  }

  private async update(
    name: string,
    change: (schedule: StoredSchedule) => StoredSchedule,
  ): Promise<StoredSchedule> {
    assertScheduleName(name);
    for (;;) {
      const current = await this.firing.store.read(name);
      if (current === undefined || current.schedule.removing === true)
        throw new ScheduleNotFoundError(scheduleNodes(this.parent, name).node);
      const { activeSince: _since, updatedAt: _at, ...input } = change(current.schedule);
      const stored = resolveSchedule(input, current.schedule, this.now(), []);
      if (await this.firing.store.write(stored, current)) return stored;
    }
  }
}
