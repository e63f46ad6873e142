import { isZkError } from '../errors/zk-error.js';
import { planSettingsFrom } from '../config/plan-options.js';
import { decodeValue } from '../serialization/codec.js';
import type { TaskStore } from '../store/task-store.js';
import { CONTROL, FAILED, READY, RUNNABLE_INDEX, childPath, isPlanName } from '../zk/layout.js';
import { parseControlRecord, type PlanControlRecord } from '../control/control-record.js';
import type { WatchEvent } from '../zk/zk-client-types.js';
import type { Zk } from '../zk/zk.js';
import { mayOutrank } from './priority.js';

/** Why the running tasks of a plan are stopped. */
export type PlanStopReason = 'deleted' | 'failed' | 'paused' | 'cancelled';

/**
 * How long one read vouches that a plan is not paused (see TrackedPlan.vouchedUntil): the longest
 * a pause or cancel cut short between its two writes goes unheeded, at the cost of one read of the
 * control node per plan and process this often while its tasks run.
 */
const VOUCH_MS = 10_000;

/** What this process knows of one plan under a followed parent, kept current by a data watch on the plan node. */
interface TrackedPlan {
  /** Grows with every reload; an answer of an older one is dropped. */
  epoch: number;
  loaded: boolean;
  ready: boolean;
  /** The plan has a runnable index (made by createPlan). */
  indexed: boolean;
  failed: boolean;
  failFast: boolean;
  /** Present while the plan is paused or cancelled: nothing of it starts. */
  control: PlanControlRecord | undefined;
  /**
   * What was read is still so: the last read completed, its watch on the plan node is armed and
   * has not fired, and the connection has not dropped since. Every pause and cancel touches the
   * plan node after writing the control record, and ZooKeeper delivers that notification before
   * the reply to any write of this session ordered after the touch: so a claim answered while this
   * holds was ordered before any such touch (see knownUnhalted).
   */
  fresh: boolean;
  /**
   * Until when (performance.now()) the view may vouch: a pause whose writer died between the
   * control record and the touch is never announced, so a vouch lasts VOUCH_MS from the read
   * behind it, and a claim's own read of the control node renews it.
   */
  vouchedUntil: number;
  /** The plan's priority, and whether some of its tasks have their own (its settings). */
  priority: number;
  taskPriorities: boolean;
  /** The index changed since it was last listed (or was never listed). */
  dirty: boolean;
  /** A full scan found nothing that can change without an event this process hears (no task, or only failed and waiting ones). */
  settled: boolean;
}

/** What the tracker tells its dispatcher. */
export interface PlanTrackerHooks {
  /** A plan's state changed (or it was first seen): work may be there. */
  readonly changed: () => void;
  /** A plan is gone: forget what is held for it. */
  readonly dropped: (plan: string) => void;
}

/**
 * The plans under the followed parents, as one worker process knows them: ready, indexed, failed,
 * failFast, settled. One child watch per parent and one data watch per plan node, both on nodes
 * that exist, so each fires, and is gone, at the latest when its node is deleted; every change of
 * a plan's state (ready, failed, retried) touches the plan node, so one round trip tells every
 * process. What is kept of a plan goes when its data watch reports the plan deleted, and its running
 * tasks are stopped then (and when a failFast plan fails).
 */
export class PlanTracker {
  private readonly plans = new Map<string, TrackedPlan>();
  /** The plans stopped (failFast, paused, cancelled), kept as they change: the dispatcher asks at every pick. */
  private readonly stopped = new Set<string>();
  /** The plans with a priority other than 0 or tasks with their own, kept as they change: usually none. */
  private readonly prioritized = new Set<string>();
  private readonly following = new Map<string, Promise<void>>();
  /** Stops of running tasks, by plan: called when the plan is deleted, or fails while failFast. */
  private readonly runningStops = new Map<string, Set<(reason: PlanStopReason) => void>>();
  private sessionEpoch = 0;

  constructor(
    private readonly zk: Zk,
    private readonly store: TaskStore,
    private readonly hooks: PlanTrackerHooks,
  ) {
    store.reads.remembers = (plan) => this.plans.get(plan)?.loaded === true;
    // A new session has none of the old one's watches: look at everything again.
    zk.on('session:started', () => {
      this.sessionEpoch += 1;
      this.following.clear();
      // A plan deleted before the new session lists its parent is never tracked again, so never dropped: forget its settings now.
      for (const plan of this.plans.keys()) this.store.reads.forgetPlan(plan);
      this.plans.clear();
      this.stopped.clear();
      this.prioritized.clear();
    });
  }

  /** Follows the plans under `parent` (idempotent; again after a new session). */
  follow(parent: string): Promise<void> {
    // Every loop waits for the same first look, so none scans a plan the index is about to cover.
    let following = this.following.get(parent);
    if (following === undefined) {
      following = this.listParent(parent, this.sessionEpoch);
      this.following.set(parent, following);
      following.catch(() => {
        if (this.following.get(parent) === following) this.following.delete(parent);
      });
    }
    return following;
  }

  /** True while the plan is followed (it exists, as far as this process has heard). */
  has(plan: string): boolean {
    return this.plans.has(plan);
  }

  /** True when the plan is ready and has a runnable index this process follows. */
  isIndexed(plan: string): boolean {
    const tracked = this.plans.get(plan);
    return tracked !== undefined && tracked.ready && tracked.indexed;
  }

  /** True when no task of the plan may start: paused, cancelled, or failed with the failFast policy (as far as this process has heard). */
  isStopped(plan: string): boolean {
    return this.stopReason(plan) !== undefined;
  }

  /** Why no task of the plan may start, if that is so; with `running`, only when its running tasks are to be aborted too. */
  private stopReason(plan: string, running = false): PlanStopReason | undefined {
    const tracked = this.plans.get(plan);
    if (tracked === undefined) return undefined;
    if (tracked.control?.state === 'cancelled') return 'cancelled';
    if (tracked.control?.state === 'paused' && (!running || tracked.control.abortRunning))
      return 'paused';
    return tracked.failed && tracked.failFast ? 'failed' : undefined;
  }

  /**
   * True when no pause or cancel of the plan can have been acknowledged before a claim this
   * process's session has been answered since: the plan has no control record as last read, and
   * nothing of the plan node has changed since (fresh). A claim's post-claim check skips its read
   * of the control node then; otherwise it reads it.
   */
  knownUnhalted(plan: string): boolean {
    const tracked = this.plans.get(plan);
    return (
      tracked !== undefined &&
      tracked.fresh &&
      tracked.control === undefined &&
      performance.now() < tracked.vouchedUntil
    );
  }

  /** A read of the plan's control node sent at `readAt` found none: the view may vouch for VOUCH_MS from then, if nothing changed since. */
  controlAbsent(plan: string, readAt: number): void {
    const tracked = this.plans.get(plan);
    if (tracked !== undefined && tracked.fresh && tracked.control === undefined)
      tracked.vouchedUntil = Math.max(tracked.vouchedUntil, readAt + VOUCH_MS);
  }

  /** Reads the plan's state again (a claim found it paused or cancelled before this process heard). */
  reload(plan: string): void {
    const tracked = this.plans.get(plan);
    if (tracked?.loaded) void this.loadPlan(plan, tracked).catch(() => undefined);
  }

  /** The plan's priority, as far as this process has heard (0 for a plan it does not follow). */
  planPriority(plan: string): number {
    return this.plans.get(plan)?.priority ?? 0;
  }

  /** True when some followed plan has a priority other than 0 or tasks with their own (else every candidate ranks 0). */
  anyPriorities(): boolean {
    return this.prioritized.size > 0;
  }

  /** True when some followed plan's tasks have priorities of their own (usually none: then no candidate needs a read). */
  anyTaskPriorities(): boolean {
    for (const plan of this.prioritized) if (this.plans.get(plan)?.taskPriorities) return true;
    return false;
  }

  /** True when some task of the plan has a priority of its own. */
  hasTaskPriorities(plan: string): boolean {
    return this.plans.get(plan)?.taskPriorities === true;
  }

  /**
   * True when an index that changed and is not listed yet may hold a task above `best` (see
   * mayOutrank). Looks only at prioritized plans unless `best` is below the default 0.
   */
  dirtyMayOutrank(best: number | undefined): boolean {
    const plans = best === undefined || best < 0 ? this.plans.keys() : this.prioritized;
    for (const plan of plans) {
      const tracked = this.plans.get(plan);
      if (
        tracked?.dirty &&
        this.isIndexed(plan) &&
        !this.isStopped(plan) &&
        mayOutrank(tracked, best)
      )
        return true;
    }
    return false;
  }

  /** True when a full scan of the plan is of no use until something changes in it (see TrackedPlan.settled). */
  isSettled(plan: string): boolean {
    return this.plans.get(plan)?.settled === true;
  }

  /** A full scan found nothing in the plan that can move without an event this process hears. */
  markSettled(plan: string): void {
    const tracked = this.plans.get(plan);
    if (tracked?.loaded) tracked.settled = true;
  }

  /** The plan's index changed: list it again, and scan it again in full. */
  markDirty(plan: string): void {
    const tracked = this.plans.get(plan);
    if (tracked === undefined) return;
    tracked.dirty = true;
    tracked.settled = false;
  }

  /** The plans whose index is to be listed (marked listed from now on), and the stopped ones. */
  takeDirty(): string[] {
    const dirty = [...this.plans]
      .filter(([plan, tracked]) => tracked.dirty && this.isIndexed(plan) && !this.isStopped(plan))
      .map(([plan]) => plan);
    for (const plan of dirty) (this.plans.get(plan) as TrackedPlan).dirty = false;
    return dirty;
  }

  /** The plan's index is gone (the plan is being deleted): the scan covers what is left of it. */
  indexGone(plan: string): void {
    const tracked = this.plans.get(plan);
    if (tracked) tracked.indexed = false;
  }

  /** The plans stopped: failed with failFast, paused or cancelled (usually none). */
  stoppedPlans(): ReadonlySet<string> {
    return this.stopped;
  }

  /**
   * Registers the stop of a running task of `plan`, called when the plan is deleted, or fails
   * while its policy is failFast; returns the function that unregisters it.
   */
  onPlanStop(plan: string, stop: (reason: PlanStopReason) => void): () => void {
    let stops = this.runningStops.get(plan);
    if (stops === undefined) {
      stops = new Set();
      this.runningStops.set(plan, stops);
    }
    stops.add(stop);
    const reason = this.stopReason(plan, true);
    if (reason !== undefined) stop(reason);
    return () => {
      stops.delete(stop);
      if (stops.size === 0 && this.runningStops.get(plan) === stops) this.runningStops.delete(plan);
    };
  }

  /** What it remembers, for leak checks. */
  footprint(): { plans: number; runningStops: number; parents: number } {
    return {
      plans: this.plans.size,
      runningStops: this.runningStops.size,
      parents: this.following.size,
    };
  }

  private async listParent(parent: string, sessionEpoch: number): Promise<void> {
    const listing = await this.zk.tryGetChildren(parent, (event) =>
      this.onParentEvent(parent, sessionEpoch, event),
    );
    if (listing === undefined) {
      // The parent does not exist yet: wait for it to be created (one watch per followed parent).
      const created = await this.zk.exists(parent, (event) =>
        this.onParentEvent(parent, sessionEpoch, event),
      );
      if (created !== undefined) await this.listParent(parent, sessionEpoch); // it was created in between
      return;
    }
    // A parent anyone may create children under holds plans anyone may have planted: refused.
    await this.zk.assertOwnAcl(parent, 'the parent of plans');
    await Promise.all(
      listing.children.filter(isPlanName).map((name) => this.trackPlan(childPath(parent, name))),
    );
  }

  private onParentEvent(parent: string, sessionEpoch: number, event: WatchEvent): void {
    if (sessionEpoch !== this.sessionEpoch) return; // the new session follows it afresh
    if (event.type === 'session-lost' && this.zk.state === 'expired') return;
    this.following.delete(parent);
    void this.follow(parent).catch(() => undefined);
    this.hooks.changed();
  }

  private async trackPlan(plan: string): Promise<void> {
    if (this.plans.has(plan)) return;
    const tracked: TrackedPlan = {
      epoch: 0,
      loaded: false,
      ready: false,
      indexed: false,
      failed: false,
      failFast: false,
      control: undefined,
      fresh: false,
      vouchedUntil: 0,
      priority: 0,
      taskPriorities: false,
      dirty: true,
      settled: false,
    };
    this.plans.set(plan, tracked);
    await this.loadPlan(plan, tracked);
  }

  /** Reads the plan's state and (re-)arms the data watch on the plan node. */
  private async loadPlan(plan: string, tracked: TrackedPlan): Promise<void> {
    const epoch = ++tracked.epoch;
    tracked.fresh = false; // until this read answers
    const readAt = performance.now();
    const sessionEpoch = this.sessionEpoch;
    const current = (): boolean =>
      this.plans.get(plan) === tracked &&
      tracked.epoch === epoch &&
      sessionEpoch === this.sessionEpoch;
    let answers: [
      { data: Buffer | null } | undefined,
      unknown,
      unknown,
      unknown,
      { data: Buffer | null } | undefined,
    ];
    try {
      answers = await Promise.all([
        this.zk
          .getData(plan, (event) => this.onPlanEvent(plan, tracked, epoch, sessionEpoch, event))
          .catch((error: unknown) => {
            if (isZkError(error, 'NO_NODE')) return undefined;
            throw error;
          }),
        this.zk.exists(childPath(plan, READY)),
        this.zk.exists(childPath(plan, FAILED)),
        this.zk.exists(childPath(plan, RUNNABLE_INDEX)),
        this.zk.tryGetData(childPath(plan, CONTROL)),
      ]);
    } catch (error) {
      if (current()) {
        this.plans.delete(plan); // looked at again by the next listing of its parent
        this.stopped.delete(plan);
        this.prioritized.delete(plan);
      }
      throw error;
    }
    if (!current()) return;
    const [node, ready, failed, index, control] = answers;
    if (node === undefined) {
      this.dropPlan(plan);
      return;
    }
    let stored: unknown;
    try {
      stored = node.data?.length ? decodeValue(plan, node.data) : undefined;
    } catch {
      stored = undefined; // another tool's plan value: the defaults apply
    }
    const settings = planSettingsFrom(stored);
    Object.assign(tracked, {
      loaded: true,
      ready: ready !== undefined,
      indexed: index !== undefined,
      failed: failed !== undefined,
      failFast: settings.failurePolicy === 'failFast',
      control:
        control === undefined
          ? undefined
          : parseControlRecord(childPath(plan, CONTROL), control.data),
      fresh: true,
      vouchedUntil: readAt + VOUCH_MS,
      priority: settings.priority,
      taskPriorities: settings.taskPriorities,
      dirty: true,
      settled: false,
    });
    if (settings.priority !== 0 || settings.taskPriorities) this.prioritized.add(plan);
    else this.prioritized.delete(plan);
    if (this.isStopped(plan)) this.stopped.add(plan);
    else this.stopped.delete(plan);
    const stopRunning = this.stopReason(plan, true);
    if (stopRunning !== undefined) this.stopRunning(plan, stopRunning);
    this.hooks.changed();
  }

  private onPlanEvent(
    plan: string,
    tracked: TrackedPlan,
    epoch: number,
    sessionEpoch: number,
    event: WatchEvent,
  ): void {
    // Any event of the plan node, even one meant for an older read, or the connection dropping: what was read may have changed.
    if (this.plans.get(plan) === tracked) tracked.fresh = false;
    if (
      sessionEpoch !== this.sessionEpoch ||
      this.plans.get(plan) !== tracked ||
      tracked.epoch !== epoch
    )
      return;
    if (event.type === 'deleted') {
      this.dropPlan(plan);
      return;
    }
    if (event.type === 'session-lost' && this.zk.state === 'expired') return; // the new session looks at everything again
    void this.loadPlan(plan, tracked).catch(() => undefined);
  }

  /** The plan is gone: forget it, and stop its running tasks quietly. */
  private dropPlan(plan: string): void {
    this.plans.delete(plan);
    this.stopped.delete(plan);
    this.prioritized.delete(plan);
    this.store.reads.forgetPlan(plan);
    this.hooks.dropped(plan);
    this.stopRunning(plan, 'deleted');
  }

  private stopRunning(plan: string, reason: PlanStopReason): void {
    for (const stop of [...(this.runningStops.get(plan) ?? [])]) {
      try {
        stop(reason);
      } catch {
        // a stop only aborts a controller; nothing of it may break the tracker
      }
    }
  }
}
