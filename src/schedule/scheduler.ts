/**
 * The scheduler loop one process runs for a schedules' parent (any number of processes may):
 * every pass records the due ticks of each schedule and fires the pending ones in order.
 *
 * Recording a tick: the misfire policy (a pure decision, tick-decisions.ts) picks the ticks to
 * fire from those after the schedule's cursor; each gets its record, created if absent, and only
 * then does the cursor move past them. Two schedulers that decide at once create the same record
 * (the first one counts) and move the cursor to the same tick; a crash between the two writes
 * leaves records the next pass finds, and a cursor the next pass moves. A tick at or before the
 * cursor is never looked at again, so a clock that jumps back fires nothing twice, and one that
 * jumps forward only fires a tick early, once.
 *
 * Firing: tick-firing.ts. Ticks of a schedule fire oldest first; one held by another process (or
 * pending after a crash, until the dead session's lock goes) holds back the later ones, which keeps
 * the overlap policy's view of "the previous run" exact.
 *
 * The loop wakes at the next tick of any schedule, when schedules are put or removed (a watch),
 * and every `pollMs` (to finish ticks whose firer died). A pass that fails (a connection problem)
 * is reported to `onError` and the loop goes on. So is a schedule refused on read (its node is
 * validated in full at every read, as `put` validates it: see ScheduleStore.read): nothing of it is
 * decided or fired, and the pass goes on with the other schedules.
 */
import { Backfiller } from '../backfill/backfiller.js';
import { DEFAULTS } from '../config/defaults.js';
import { MalformedNodeError } from '../errors/task-errors.js';
import { MAX_TIMER_MS } from '../util/abort-signals.js';
import type { Watcher, ZkSession } from '../zk/zk-client-types.js';
import { scheduleNodes } from '../zk/layout.js';
import { cronTimes, type CronTimes } from './cron-times.js';
import type { StoredSchedule } from './schedule-definition.js';
import { fireTick, type FiringContext } from './tick-firing.js';
import { dueTicks } from './tick-decisions.js';
import {
  cronTickId,
  firedAfterEarlierRuns,
  isFinal,
  isManualTickId,
  planPathForTick,
  type TickRecord,
} from './tick-record.js';

export interface SchedulerRuntime {
  readonly firing: FiringContext;
  readonly pollMs: number;
  /** The clock ticks are read by (injectable for tests and the simulation). */
  now(): number;
  onError(error: unknown): void;
  /** A tick this process brought to a final state. */
  onTick?(schedule: string, id: string, state: string, plan: string): void;
}

export class Scheduler {
  private stopped = false;
  private loop: Promise<void> | undefined;
  private wakeUp: (() => void) | undefined;
  /** A watch fired during a pass: the next sleep is skipped. */
  private changed = false;
  private listArmed = false;
  private readonly definitionArmed = new Set<string>();
  private readonly timesCache = new Map<string, CronTimes>();
  /** Tick ids known to be final and their state, per schedule: final records never change, so they are not read again. */
  private readonly finalTicks = new Map<string, Map<string, string>>();
  /** Per schedule, when this process first saw each tick record not named by the cursor (its clock). */
  private readonly unnamedSince = new Map<string, Map<string, number>>();

  private readonly backfiller: Backfiller;

  constructor(private readonly runtime: SchedulerRuntime) {
    this.backfiller = new Backfiller(runtime.firing);
  }

  start(): void {
    this.loop ??= this.run();
  }

  /** Ends the loop after the pass in progress (a firing under way finishes; its lock goes). */
  async stop(): Promise<void> {
    this.stopped = true;
    this.wakeUp?.();
    await this.loop;
  }

  /** One pass over every schedule now (also what the loop does); resolves the earliest next tick. */
  async pass(): Promise<number | undefined> {
    this.changed = false; // what changed before now, this pass reads
    const { store } = this.runtime.firing;
    const names = await store.names(
      this.listArmed ? undefined : this.armed(() => (this.listArmed = false)),
    );
    this.listArmed = true;
    for (const cached of [...this.finalTicks.keys()])
      if (!names.includes(cached)) this.finalTicks.delete(cached);
    for (const cached of [...this.unnamedSince.keys()])
      if (!names.includes(cached)) this.unnamedSince.delete(cached);
    let earliest: number | undefined;
    for (const name of names) {
      if (this.stopped) break;
      try {
        const next = await this.passSchedule(name);
        if (next !== undefined) earliest = Math.min(earliest ?? next, next);
      } catch (error) {
        this.runtime.onError(error);
      }
    }
    return earliest;
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      let next: number | undefined;
      try {
        next = await this.pass();
      } catch (error) {
        this.runtime.onError(error);
      }
      if (this.stopped) break;
      const now = this.runtime.now();
      await this.sleep(
        Math.min(
          this.runtime.pollMs,
          next === undefined ? Number.POSITIVE_INFINITY : Math.max(0, next - now),
        ),
      );
    }
  }

  private async passSchedule(name: string): Promise<number | undefined> {
    const { store } = this.runtime.firing;
    const watch = this.definitionArmed.has(name)
      ? undefined
      : this.armed(() => this.definitionArmed.delete(name));
    const read = await store.read(name, watch).catch((error: unknown) => {
      if (watch !== undefined && error instanceof MalformedNodeError)
        this.definitionArmed.add(name); // read, so watched, but not a schedule
      throw error;
    });
    if (read === undefined) {
      this.forget(name); // no node: no watch was set
      return undefined;
    }
    if (watch !== undefined) this.definitionArmed.add(name);
    const schedule = read.schedule;
    if (schedule.removing === true) {
      // A removal that stopped part-way (its caller cut off): nothing fires from it, and any scheduler finishes it.
      await this.runtime.firing.store.remove(name);
      this.forget(name);
      return undefined;
    }
    const times = this.timesOf(schedule);
    if (!schedule.paused) await this.recordDueTicks(schedule, read.czxid, times);
    // Backfills step whether or not the schedule is paused: a backfill is an operator's explicit request.
    const backfillTicks = await this.backfiller.stepAll(schedule, read.czxid, (error) =>
      this.runtime.onError(error),
    );
    await this.firePending(schedule, backfillTicks);
    return schedule.paused ? undefined : times.next(this.runtime.now());
  }

  /**
   * Decides which due ticks fire and commits the decision in the cursor (a versioned write from the
   * cursor read: a decision made from a cursor another scheduler has moved meanwhile never lands),
   * then creates the records of the ticks the cursor names, its own decision's or one a scheduler
   * that died after committing left.
   */
  private async recordDueTicks(
    schedule: StoredSchedule,
    scheduleNode: number,
    times: CronTimes,
  ): Promise<void> {
    const { store, zk } = this.runtime.firing;
    // The records a cursor names are made fenced by the session that read it: a scheduler whose
    // session expired while it held an old cursor (frozen, cut off) makes none of them late.
    const session = zk.session;
    const read = await store.cursor(schedule.name);
    // The schedule node again, after the cursor: a definition read before the schedule was removed and put again
    // must not decide for the new one (the cursor read may be the new one's).
    if ((await zk.exists(scheduleNodes(store.parent, schedule.name).node))?.czxid !== scheduleNode)
      return;
    // A decision made for an earlier schedule of this name (landed late on this one's cursor) counts for nothing.
    const cursor =
      read.scheduleNode === undefined || read.scheduleNode === scheduleNode
        ? read
        : { ...read, tick: undefined, fire: [] };
    // The records of the decision read first: a scheduler that committed it may have died before making them,
    // and the commit below replaces its list. So every committed list has its records before it is replaced.
    await this.createTickRecords(schedule, scheduleNode, cursor.fire, session);
    const decision = dueTicks(times, { ...schedule, cursor: cursor.tick, now: this.runtime.now() });
    if (decision.cursor === undefined) return;
    if (
      await store.commitDecision(
        schedule.name,
        cursor,
        decision.cursor,
        decision.fire,
        decision.skipped,
        scheduleNode,
      )
    )
      await this.createTickRecords(schedule, scheduleNode, decision.fire, session);
    else {
      const now = await store.cursor(schedule.name); // another decided meanwhile
      if (now.scheduleNode === undefined || now.scheduleNode === scheduleNode)
        await this.createTickRecords(schedule, scheduleNode, now.fire, session);
    }
  }

  private async createTickRecords(
    schedule: StoredSchedule,
    scheduleNode: number,
    ticks: readonly number[],
    session: ZkSession,
  ): Promise<void> {
    const { store, identity } = this.runtime.firing;
    for (const tick of ticks) {
      const id = cronTickId(tick);
      const record: TickRecord = {
        kind: 'cron',
        tick,
        firedAt: new Date(tick).toISOString(),
        plan: planPathForTick(schedule.planParent, schedule.name, id),
        state: 'pending',
        by: identity,
        updatedAt: new Date().toISOString(),
        scheduleNode,
      };
      await store.createTick(schedule.name, id, record, { fence: session });
    }
  }

  /**
   * Fires the pending ticks oldest first, then prunes; `backfillTicks` are the tick ids backfills
   * name as under way (undefined when that is not known this pass: nothing is pruned then).
   */
  private async firePending(
    schedule: StoredSchedule,
    backfillTicks: ReadonlySet<string> | undefined,
  ): Promise<void> {
    const { store } = this.runtime.firing;
    const known = this.finalTicks.get(schedule.name) ?? new Map<string, string>();
    this.finalTicks.set(schedule.name, known);
    const ids = await store.tickIds(schedule.name);
    for (const id of ids) {
      if (this.stopped) return;
      if (known.has(id)) continue;
      const { state, here } = await fireTick(this.runtime.firing, schedule, id);
      if (state === 'gone') continue;
      if (state === 'held-elsewhere' || !isFinal(state)) return; // later ticks wait for it
      known.set(id, state);
      if (here)
        this.runtime.onTick?.(
          schedule.name,
          id,
          state,
          planPathForTick(schedule.planParent, schedule.name, id),
        );
    }
    for (const id of known.keys()) if (!ids.includes(id)) known.delete(id);
    if (backfillTicks !== undefined) await this.prune(schedule, ids, known, backfillTicks);
  }

  /**
   * Deletes old final tick records. Kept whatever their age: the newest fired cron tick's and, under
   * 'skip' or 'cancelPrevious', those of runs still under way that no later cron tick vouches for
   * (manual runs, and cron runs fired under 'allow'), which the overlap policy reads; and those the
   * cursor names, whose records every pass makes if absent. A record the cursor stopped naming goes
   * only once this process has seen it unnamed for `keepTicksMs`: a scheduler that read an older
   * cursor naming it makes its records within one pass, fenced by its session, and never stalls
   * that long with its session alive, so a pruned record is never made again (and fired twice).
   * The ticks a backfill names as under way count as named in the same way.
   */
  private async prune(
    schedule: StoredSchedule,
    ids: readonly string[],
    known: ReadonlyMap<string, string>,
    backfillTicks: ReadonlySet<string>,
  ): Promise<void> {
    const { store } = this.runtime.firing;
    const cursor = await store.cursor(schedule.name);
    const now = this.runtime.now();
    const named = new Set([...cursor.fire.map(cronTickId), ...backfillTicks]);
    const seen = this.unnamedSince.get(schedule.name) ?? new Map<string, number>();
    this.unnamedSince.set(schedule.name, seen);
    for (const id of [...seen.keys()]) if (!ids.includes(id) || named.has(id)) seen.delete(id);
    for (const id of ids) if (!named.has(id) && !seen.has(id)) seen.set(id, now);
    const newestFiredCron = [...ids]
      .reverse()
      .find((id) => !isManualTickId(id) && known.get(id) === 'fired');
    const prunable = ids.filter(
      (id) =>
        id !== newestFiredCron && now - (seen.get(id) ?? now) >= DEFAULTS.schedule.keepTicksMs,
    );
    const stillNeeded = async (record: TickRecord): Promise<boolean> =>
      schedule.overlap !== 'allow' &&
      record.state === 'fired' &&
      !firedAfterEarlierRuns(record) &&
      !(await this.runtime.firing.planFinished(record.plan));
    await store.prune(
      schedule.name,
      ids,
      prunable,
      DEFAULTS.schedule.keepTicks,
      cursor,
      backfillTicks,
      stillNeeded,
    );
  }

  private timesOf(schedule: StoredSchedule): CronTimes {
    const key = `${schedule.cron}\u0000${schedule.timezone}`;
    let times = this.timesCache.get(key);
    if (times === undefined) {
      times = cronTimes(schedule.cron, schedule.timezone, `schedule "${schedule.name}"`);
      if (this.timesCache.size > 1_000) this.timesCache.clear();
      this.timesCache.set(key, times);
    }
    return times;
  }

  private forget(name: string): void {
    this.finalTicks.delete(name);
    this.unnamedSince.delete(name);
    this.definitionArmed.delete(name);
  }

  /** A one-shot watcher that re-arms nothing itself: it clears the flag and wakes the loop. */
  private armed(clear: () => void): Watcher {
    return () => {
      clear();
      this.changed = true; // a pass under way misses it: the sleep after it is skipped
      this.wakeUp?.();
    };
  }

  private sleep(ms: number): Promise<void> {
    if (this.changed) return Promise.resolve();
    return new Promise((resolve) => {
      const finish = (): void => {
        clearTimeout(timer);
        this.wakeUp = undefined;
        resolve();
      };
      const timer = setTimeout(finish, Math.min(ms, MAX_TIMER_MS));
      this.wakeUp = finish;
    });
  }
}
