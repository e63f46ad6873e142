/**
 * Moving backfills on: every scheduler, at each pass over a schedule, takes one step of each of
 * its backfills; `backfill` and `cancelBackfill` take one too. A step:
 *
 * 1. reads the backfill's record (its version);
 * 2. makes the records of the ticks it names as under way, if absent (a step that committed them
 *    may have died before making them), fenced by the session that read it;
 * 3. reads each of those ticks: its record, and the plan of a fired one; a plan still running
 *    under a cancelled backfill is cancelled;
 * 4. decides (backfill-decisions.ts): ended ticks leave the list and are counted, new ticks start
 *    in the free slots, the backfill completes after its last tick ended;
 * 5. commits that with a versioned write over the record read: of two schedulers stepping at once
 *    one lands, the other does nothing (its next pass reads the new record). Each tick leaves the
 *    list and is counted in the write that lands, so a tick is never counted twice;
 * 6. makes the records of the ticks it started, fenced by the session. The scheduler's pass fires
 *    them next (tick-firing.ts), under the tick locks live ticks use: a backfilled tick and a live
 *    tick of the same time are one record and one plan.
 *
 * A crash at any point leaves a record some later step reads: one before the commit changed
 * nothing, one after it left the started ticks named, whose records step 2 makes. A tick record
 * named by a backfill is not pruned (Scheduler.prune), and one whose tick ended is pruned only
 * after a stale scheduler could still make it again.
 */
import type { PlanState } from '../plan/plan-states.js';
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
   * finished ones; resolves the tick ids the backfills name as under way, whose records must stay.
   * A backfill whose step fails (a malformed record, a lost connection) is reported to `onError`
   * and passed over: the schedule's live ticks still fire. Its ticks are then missing from the
   * names for this pass, which prunes nothing for it: a tick record goes only after it has been
   * unnamed for `keepTicksMs` (minutes), far longer than a passing error.
   */
  async stepAll(
    schedule: StoredSchedule,
    scheduleNode: number,
    onError: (error: unknown) => void,
  ): Promise<Set<string>> {
    const named = new Set<string>();
    const finished: BackfillRead[] = [];
    for (const id of await this.store.ids(schedule.name)) {
      let read: BackfillRead | undefined;
      try {
        read = await this.step(schedule, scheduleNode, id);
      } catch (error) {
        onError(error);
        continue;
      }
      if (read === undefined) continue;
      for (const tick of read.record.running) named.add(cronTickId(tick));
      if (isFinished(read.record) || read.record.scheduleNode !== scheduleNode) finished.push(read);
    }
    // Ids sort by creation time: the oldest finished ones go first.
    for (const read of finished.slice(0, Math.max(0, finished.length - KEEP_FINISHED_BACKFILLS)))
      await this.store.delete(schedule.name, read);
    return named;
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
    if (record.state === 'running')
      await this.createTickRecords(schedule, id, record, record.running, session);
    const progress = new Map<number, TickProgress>();
    for (const tick of record.running)
      progress.set(tick, await this.progressOf(schedule, id, record, tick));
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

  /** Where a tick under way stands; cancels its plan when the backfill was cancelled. */
  private async progressOf(
    schedule: StoredSchedule,
    id: string,
    record: BackfillRecord,
    tick: number,
  ): Promise<TickProgress> {
    const read = await this.firing.store.readTick(schedule.name, cronTickId(tick));
    // No record: the backfill was cancelled before it was made (a running backfill made it just now).
    if (read === undefined) return record.state === 'running' ? 'running' : 'notRun';
    const { state, plan } = read.record;
    if (state === 'pending') return 'running';
    if (state === 'skipped') return 'notRun';
    if (state === 'failed') return 'failed';
    const planState = await this.firing.planState(plan);
    const ended = ENDED.get(planState);
    if (ended !== undefined) return ended;
    if (record.state === 'cancelled')
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
