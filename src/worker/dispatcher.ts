import { isZkError } from '../errors/zk-error.js';
import { planSettingsFrom } from '../config/plan-options.js';
import { decodeValue } from '../serialization/codec.js';
import { classifyTask, isClaimable } from '../store/task-state.js';
import type { Claim, TaskStore } from '../store/task-store.js';
import { FAILED, OWNER, READY, RUNNABLE_INDEX, childPath, isPlanName, parentOf } from '../zk/layout.js';
import type { WatchEvent } from '../zk/zk-client-types.js';
import type { Zk } from '../zk/zk.js';
import { ClaimBook } from './claim-book.js';
import type { Seeker } from './find-task.js';
import type { WakeUp } from './wake-up.js';
import { MAX_TIMER_MS } from '../util/signals.js';

/** How often one loop of the process still scans indexed plans in full, to find tasks whose index entry a crash lost. */
const FULL_SCAN_INTERVAL_MS = 10_000;

/** Why the running tasks of a plan are stopped. */
export type PlanStopReason = 'deleted' | 'failed';

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
  /** The index changed since it was last listed (or was never listed). */
  dirty: boolean;
  /** A full scan found nothing that can change without an event this process hears (no task, or only failed and waiting ones). */
  settled: boolean;
}

/**
 * Watch-driven dispatch for one worker process. Its loops take tasks from the plans' runnable
 * indexes (`<plan>/runnable/task-N`), which it watches, and wake as soon as an entry appears, a
 * plan's state changes, or the owner of a task they lost to goes away. Candidates are picked at
 * random, so idle workers do not all race for one task. Plans without an index (written by other
 * tools) are still found by the spec's scan.
 *
 * Every watch it sets is on a node that exists, so each one fires, and is gone, at the latest when
 * its plan is deleted: the plan node's data (its state: ready, failed, retried, deleted), the index's
 * children, a lost race's `owner` node; plus the followed parents' children. What it remembers of a
 * plan goes when the plan's data watch reports the plan deleted.
 */
export class Dispatcher {
  readonly book = new ClaimBook();
  private readonly candidates = new Set<string>();
  private readonly plans = new Map<string, TrackedPlan>();
  private readonly following = new Map<string, Promise<void>>();
  private readonly offeredLater = new Map<string, ReturnType<typeof setTimeout>>();
  private readonly watchedOwners = new Set<string>();
  /** Stops of running tasks, by plan: called when the plan is deleted, or fails while failFast. */
  private readonly runningStops = new Map<string, Set<(reason: PlanStopReason) => void>>();
  private refreshing: Promise<void> | undefined;
  private lastFullScan = 0;
  private sessionEpoch = 0;

  constructor(
    private readonly zk: Zk,
    private readonly store: TaskStore,
    private readonly wakeUp: WakeUp,
    private readonly random: () => number = Math.random,
  ) {
    store.remembers = (plan) => this.plans.get(plan)?.loaded === true;
    // A new session has none of the old one's watches: look at everything again.
    zk.on('session:started', () => {
      this.sessionEpoch += 1;
      this.following.clear();
      this.watchedOwners.clear();
      // A plan deleted before the new session lists its parent is never tracked again, so never dropped: forget its settings now.
      for (const plan of this.plans.keys()) this.store.forgetPlan(plan);
      this.plans.clear();
      this.wakeUp.wake();
    });
  }

  /** True when the plan is ready and has a runnable index this process follows. */
  isIndexed(plan: string): boolean {
    const tracked = this.plans.get(plan);
    return tracked !== undefined && tracked.ready && tracked.indexed;
  }

  /** True when no task of the plan may start: it failed and its policy is failFast (as far as this process has heard). */
  isStopped(plan: string): boolean {
    const tracked = this.plans.get(plan);
    return tracked !== undefined && tracked.failed && tracked.failFast;
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

  /** True for one caller every FULL_SCAN_INTERVAL_MS: time to scan indexed plans in full too. */
  fullScanDue(): boolean {
    const now = Date.now();
    if (now - this.lastFullScan < FULL_SCAN_INTERVAL_MS) return false;
    this.lastFullScan = now;
    return true;
  }

  /** A loop of this process holds a task: not a candidate for the others. */
  hold(task: string): void {
    this.book.reserve(task);
    this.candidates.delete(task);
  }

  /** A loop of this process is done with a task it held; `deleted`: the task node is gone (done). */
  letGo(task: string, deleted: boolean): void {
    this.book.release(task, deleted);
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
    if (this.isStopped(plan)) stop('failed');
    return () => {
      stops.delete(stop);
      if (stops.size === 0 && this.runningStops.get(plan) === stops) this.runningStops.delete(plan);
    };
  }

  /** Tasks known to be runnable right now (a finishing worker made them so): tried first, by any loop. */
  offer(tasks: readonly string[]): void {
    for (const task of tasks) {
      this.book.reoffered(task);
      this.candidates.add(task);
    }
    if (tasks.length > 0) this.wakeUp.wake(tasks.length);
  }

  /**
   * Makes a task a candidate again at `at` (a retry delay or a local cool-down is over); with
   * `reindex`, first puts it back in its plan's index, from which a failed try removed it so that
   * no worker would take it before its time.
   */
  offerLater(task: string, at: number, reindex: boolean): void {
    if (this.offeredLater.has(task)) return;
    const timer = setTimeout(() => {
      this.offeredLater.delete(task);
      void (reindex ? this.store.markRunnable(task) : Promise.resolve())
        .then(() => this.offer([task]))
        .catch(() => undefined); // the full scan finds it anyway
    }, Math.min(Math.max(0, at - Date.now()), MAX_TIMER_MS));
    timer.unref?.();
    this.offeredLater.set(task, timer);
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

  /** Takes a candidate task: claims it (one write) and returns the claim; undefined when none is left. */
  async take(seeker: Seeker): Promise<Claim | undefined> {
    for (;;) {
      if (seeker.stop.aborted) return undefined;
      if (this.candidates.size === 0) {
        await this.refresh();
        if (this.candidates.size > 1) this.wakeUp.wake(this.candidates.size - 1); // enough loops for what was found
      }
      const task = this.pick(seeker);
      if (task === undefined) return undefined;
      this.book.reserve(task); // from now on, before the claim's answer: a refresh must not offer it again
      let claim: Claim | undefined;
      try {
        claim = await this.store.claim(task, seeker.workerId, seeker.taskSignal);
      } finally {
        if (claim === undefined) this.book.release(task);
      }
      if (claim !== undefined) return claim;
      await this.watchOwner(task);
    }
  }

  /**
   * After losing a task to another worker (or finding it owned in a scan): when its owner goes
   * (done, released or dead), look at the task again. The watch is a data watch on the owner node,
   * which exists when it is set and fires when it goes; an owner already gone sets no watch.
   */
  async watchOwner(task: string): Promise<void> {
    if (this.watchedOwners.has(task)) return;
    this.watchedOwners.add(task);
    const onGone = (): void => {
      this.watchedOwners.delete(task);
      void this.reconsider(task);
    };
    try {
      await this.zk.getData(childPath(task, OWNER), (event) => {
        if (event.type !== 'changed') onGone();
      });
    } catch (error) {
      this.watchedOwners.delete(task);
      if (isZkError(error, 'NO_NODE')) {
        await this.reconsider(task);
        return;
      }
      if (!isZkError(error) || !error.isConnectionProblem) throw error;
    }
  }

  /** What this process remembers, for leak checks: plans, candidates, owner watches, timers, stops, held and done tasks. */
  footprint(): { plans: number; candidates: number; watchedOwners: number; offeredLater: number; runningStops: number; held: number; done: number; parents: number } {
    return {
      plans: this.plans.size,
      candidates: this.candidates.size,
      watchedOwners: this.watchedOwners.size,
      offeredLater: this.offeredLater.size,
      runningStops: this.runningStops.size,
      held: this.book.heldCount,
      done: this.book.doneCount,
      parents: this.following.size,
    };
  }

  /** A task whose owner went, or whose claim found no owner: a candidate when it can be taken, else its plan's index is looked at again. */
  private async reconsider(task: string): Promise<void> {
    const plan = parentOf(task);
    try {
      const listing = await this.store.inspectTask(task);
      if (listing === undefined) {
        await this.store.unmarkRunnable(task); // gone: drop a stale index entry
        return;
      }
      const state = classifyTask(listing.children, listing.childVersion);
      if (isClaimable(state) && !this.isStopped(plan)) this.offer([task]);
      else this.markDirty(plan);
    } catch {
      this.markDirty(plan);
    }
  }

  private pick(seeker: Seeker): string | undefined {
    // Plans stopped by failFast are rare: look a candidate's plan up only when there is one.
    const stopped = new Set([...this.plans.keys()].filter((plan) => this.isStopped(plan)));
    const usable: string[] = [];
    for (const task of this.candidates) {
      if (stopped.size > 0 && stopped.has(parentOf(task))) {
        this.candidates.delete(task); // a failFast plan that failed: nothing of it starts
        continue;
      }
      if (!this.book.isHeld(task) && !seeker.skip?.(task)) usable.push(task);
    }
    if (usable.length === 0) return undefined;
    const task = usable[Math.floor(this.random() * usable.length)] as string;
    this.candidates.delete(task);
    return task;
  }

  /** Lists the indexes that changed (one listing at a time for the whole process). */
  private refresh(): Promise<void> {
    this.refreshing ??= (async () => {
      try {
        const dirty = [...this.plans].filter(([plan, tracked]) => tracked.dirty && this.isIndexed(plan) && !this.isStopped(plan)).map(([plan]) => plan);
        await Promise.all(dirty.map((plan) => this.listIndex(plan)));
      } finally {
        this.refreshing = undefined;
      }
    })();
    return this.refreshing;
  }

  private async listIndex(plan: string): Promise<void> {
    const tracked = this.plans.get(plan);
    if (tracked === undefined) return;
    tracked.dirty = false;
    const listing = await this.zk.tryGetChildren(childPath(plan, RUNNABLE_INDEX), () => this.markDirty(plan));
    if (listing === undefined) {
      tracked.indexed = false; // the index is gone (the plan is being deleted): the scan covers what is left
      return;
    }
    for (const name of listing.children) {
      const task = childPath(plan, name);
      if (!this.book.isHeldOrDone(task)) this.candidates.add(task);
    }
  }

  private async listParent(parent: string, sessionEpoch: number): Promise<void> {
    const listing = await this.zk.tryGetChildren(parent, (event) => this.onParentEvent(parent, sessionEpoch, event));
    if (listing === undefined) {
      // The parent does not exist yet: wait for it to be created (one watch per followed parent).
      const created = await this.zk.exists(parent, (event) => this.onParentEvent(parent, sessionEpoch, event));
      if (created !== undefined) await this.listParent(parent, sessionEpoch); // it was created in between
      return;
    }
    await Promise.all(listing.children.filter(isPlanName).map((name) => this.trackPlan(childPath(parent, name))));
  }

  private onParentEvent(parent: string, sessionEpoch: number, event: WatchEvent): void {
    if (sessionEpoch !== this.sessionEpoch) return; // the new session follows it afresh
    if (event.type === 'session-lost' && this.zk.state === 'expired') return;
    this.following.delete(parent);
    void this.follow(parent).catch(() => undefined);
    this.wakeUp.wake(1);
  }

  private async trackPlan(plan: string): Promise<void> {
    if (this.plans.has(plan)) return;
    const tracked: TrackedPlan = { epoch: 0, loaded: false, ready: false, indexed: false, failed: false, failFast: false, dirty: true, settled: false };
    this.plans.set(plan, tracked);
    await this.loadPlan(plan, tracked);
  }

  /** Reads the plan's state and (re-)arms the data watch on the plan node. */
  private async loadPlan(plan: string, tracked: TrackedPlan): Promise<void> {
    const epoch = ++tracked.epoch;
    const sessionEpoch = this.sessionEpoch;
    const current = (): boolean => this.plans.get(plan) === tracked && tracked.epoch === epoch && sessionEpoch === this.sessionEpoch;
    let answers: [{ data: Buffer | null } | undefined, unknown, unknown, unknown];
    try {
      answers = await Promise.all([
        this.zk.getData(plan, (event) => this.onPlanEvent(plan, tracked, epoch, sessionEpoch, event)).catch((error: unknown) => {
          if (isZkError(error, 'NO_NODE')) return undefined;
          throw error;
        }),
        this.zk.exists(childPath(plan, READY)),
        this.zk.exists(childPath(plan, FAILED)),
        this.zk.exists(childPath(plan, RUNNABLE_INDEX)),
      ]);
    } catch (error) {
      if (current()) this.plans.delete(plan); // looked at again by the next listing of its parent
      throw error;
    }
    if (!current()) return;
    const [node, ready, failed, index] = answers;
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
    Object.assign(tracked, {
      loaded: true,
      ready: ready !== undefined,
      indexed: index !== undefined,
      failed: failed !== undefined,
      failFast: planSettingsFrom(stored).failurePolicy === 'failFast',
      dirty: true,
      settled: false,
    });
    if (this.isStopped(plan)) this.stopRunning(plan, 'failed');
    this.wakeUp.wake(1);
  }

  private onPlanEvent(plan: string, tracked: TrackedPlan, epoch: number, sessionEpoch: number, event: WatchEvent): void {
    if (sessionEpoch !== this.sessionEpoch || this.plans.get(plan) !== tracked || tracked.epoch !== epoch) return;
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
    const prefix = `${plan}/`;
    for (const task of this.candidates) if (task.startsWith(prefix)) this.candidates.delete(task);
    for (const [task, timer] of this.offeredLater) {
      if (!task.startsWith(prefix)) continue;
      clearTimeout(timer);
      this.offeredLater.delete(task);
    }
    this.book.forgetPlan(plan);
    this.store.forgetPlan(plan);
    this.stopRunning(plan, 'deleted');
  }

  private stopRunning(plan: string, reason: PlanStopReason): void {
    for (const stop of [...(this.runningStops.get(plan) ?? [])]) {
      try {
        stop(reason);
      } catch {
        // a stop only aborts a controller; nothing of it may break the dispatcher
      }
    }
  }

  private markDirty(plan: string): void {
    const tracked = this.plans.get(plan);
    if (tracked) {
      tracked.dirty = true;
      tracked.settled = false;
    }
    this.wakeUp.wake(1); // it lists the index, and wakes others if it finds more than it takes
  }
}
