/**
 * Moving backfills on: every scheduler, at each pass over a schedule, takes one step of each of
 * its backfills; `backfill` and `cancelBackfill` take one too. A step:
 *
 * 1. reads the backfill's record (its version);
 * 2. reads each tick it names as under way: its record, and the plan of a fired one. A tick
 *    without a record gets it now, fenced by the session that read the backfill (a step that
 *    committed the tick may have died before making it). Under a cancelled backfill, the running
 *    plan of a tick this backfill made is cancelled;
 * 3. decides (backfill-decisions.ts): ended ticks leave the list and are counted, new ticks start
 *    in the free slots, the backfill completes after its last tick ended;
 * 4. commits that with a versioned write over the record read: of two schedulers stepping at once
 *    one lands, the other does nothing (its next pass reads the new record). Each tick leaves the
 *    list and is counted in the write that lands, so a tick is never counted twice;
 * 5. makes the records of the ticks it started, fenced by the session. The scheduler's pass fires
 *    them next (tick-firing.ts), under the tick locks live ticks use: a backfilled tick and a live
 *    tick of the same time are one record and one plan.
 *
 * A crash at whatever point leaves a record some later step reads: one before the commit changed
 * nothing, one after it left the started ticks named, whose records the next step makes (2). A tick record
 * named by a backfill is not pruned (Scheduler.prune), and one whose tick ended is pruned only
 * after a stale scheduler could still make it again.
 */
import type { PlanState } from '../plan/plan-states.js';
import { MalformedNodeError } from '../errors/task-errors.js';
import { cronTimes } from '../schedule/cron-times.js';
import type { StoredSchedule } from '../schedule/schedule-definition.js';
import type { FiringContext } from '../schedule/tick-firing.js';
import { cronTickId, planPathForTick, type TickRecord } from '../schedule/tick-record.js';
import type { ZkSession } from '../zk/zk-client-types.js';
import { backfillStep, type TickProgress } from './backfill-decisions.js';
import { KEEP_FINISHED_BACKFILLS, isFinished, type BackfillRecord } from './backfill-record.js';
import type { BackfillRead, BackfillStore } from './backfill-store.js';

/** A plan state at which a backfill counts its tick as ended. */
const ENDED: ReadonlyMap<PlanState | 'deleted', TickProgress> = new Map([
  ['completed', 'completed'],
  ['failed', 'failed'],
  ['cancelled', 'failed'],
  ['deleted', 'failed'],
]);

export class Backfiller {
  private readonly store: BackfillStore;

  constructor(private readonly firing: FiringContext) {
    this.store = firing.backfills;
  }

  /**
   * One step of each backfill of the schedule (read at `scheduleNode`), then the pruning of old
   * finished ones; resolves the tick ids the backfills name as under way, whose records must stay,
   * or undefined when that is not known this pass (then nothing may be pruned). Whatever fails (a
   * lost connection, a malformed record, a record someone put children under) is reported to
   * `onError` and passed over: the schedule's live ticks still fire, and the other backfills step.
   * A backfill whose step failed still names its ticks, read apart; a record that is not a valid
   * one names none (it fires nothing either).
   */
  async stepAll(
    schedule: StoredSchedule,
    scheduleNode: number,
    onError: (error: unknown) => void,
  ): Promise<Set<string> | undefined> {
    let ids: string[];
    try {
      ids = await this.store.ids(schedule.name);
    } catch (error) {
      onError(error);
      return undefined;
    }
    const named = new Set<string>();
    let known = true;
    const finished: BackfillRead[] = [];
    for (const id of ids) {
      let read: BackfillRead | undefined;
      try {
        read = await this.step(schedule, scheduleNode, id);
      } catch (error) {
        onError(error);
        try {
          read = await this.store.read(schedule.name, id);
        } catch (again) {
          if (!(again instanceof MalformedNodeError)) known = false;
          continue;
        }
      }
      if (read === undefined) continue;
      for (const tick of read.record.running) named.add(cronTickId(tick));
      if (isFinished(read.record) || read.record.scheduleNode !== scheduleNode) finished.push(read);
    }
    // Ids sort by creation time: the oldest finished ones go first.
    for (const read of finished.slice(0, Math.max(0, finished.length - KEEP_FINISHED_BACKFILLS)))
      await this.store.delete(schedule.name, read).catch(onError);
    return known ? named : undefined;
  }

  /**
   * One step of a backfill; resolves its record as it now stands (undefined when it is gone). A
   * backfill made for an earlier schedule of this name does nothing.
   */
  async step(
    schedule: StoredSchedule,
    scheduleNode: number,
    id: string,
  ): Promise<BackfillRead | undefined> {
    const session = this.firing.zk.session;
    const read = await this.store.read(schedule.name, id);
    if (read === undefined) return undefined;
    const { record } = read;
    if (record.scheduleNode !== scheduleNode || isFinished(record)) return read;
    const progress = new Map<number, TickProgress>();
    for (const tick of record.running)
      progress.set(tick, await this.progressOf(schedule, id, record, tick, session));
    const upcoming =
      record.state === 'running'
        ? cronTimes(record.cron, record.timezone, `backfill ${id}`).nextN(
            record.last ?? record.from - 1,
            record.concurrency,
          )
        : [];
    const step = backfillStep(record, progress, upcoming, new Date().toISOString());
    if (step === undefined) return read;
    if (!(await this.store.update(schedule.name, read, step.record, { fence: session })))
      return await this.store.read(schedule.name, id); // another step landed first
    await this.createTickRecords(schedule, id, step.record, step.start, session);
    return { ...read, record: step.record, version: read.version + 1 };
  }

  /**
   * Where a tick under way stands. A tick without a record gets it now: a step that committed the
   * tick may have died before making it (a cancelled backfill makes none, and counts the tick not
   * run). Under a cancelled backfill, the plan of a tick this backfill made is cancelled; a plan
   * another made (a live tick, another backfill) is left to run, and waited for.
   */
  private async progressOf(
    schedule: StoredSchedule,
    id: string,
    record: BackfillRecord,
    tick: number,
    session: ZkSession,
  ): Promise<TickProgress> {
    const read = await this.firing.store.readTick(schedule.name, cronTickId(tick));
    if (read === undefined) {
      if (record.state !== 'running') return 'notRun';
      await this.createTickRecords(schedule, id, record, [tick], session);
      return 'running';
    }
    const { state, plan } = read.record;
    if (state === 'pending') return 'running';
    if (state === 'skipped') return 'notRun';
    if (state === 'failed') return 'failed';
    const planState = await this.firing.planState(plan);
    const ended = ENDED.get(planState);
    if (ended !== undefined) return ended;
    if (
      record.state === 'cancelled' &&
      read.record.kind === 'backfill' &&
      read.record.backfill === id
    )
      await this.firing.cancelPlan(
        plan,
        `backfill ${id} of schedule "${schedule.name}" was cancelled`,
      );
    return 'running';
  }

  /** The records of `ticks`, made if absent (a live tick of the same time may have made one first: it counts). */
  private async createTickRecords(
    schedule: StoredSchedule,
    id: string,
    backfill: BackfillRecord,
    ticks: readonly number[],
    session: ZkSession,
  ): Promise<void> {
    const { store, identity } = this.firing;
    for (const tick of ticks) {
      const tickId = cronTickId(tick);
      const record: TickRecord = {
        kind: 'backfill',
        backfill: id,
        tick,
        firedAt: new Date(tick).toISOString(),
        plan: planPathForTick(schedule.planParent, schedule.name, tickId),
        state: 'pending',
        by: identity,
        updatedAt: new Date().toISOString(),
        scheduleNode: backfill.scheduleNode,
      };
      await store.createTick(schedule.name, tickId, record, { fence: session });
    }
  }
}
