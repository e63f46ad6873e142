import { isZkError } from '../errors/zk-error.js';
import { classifyTask, isClaimable } from '../store/task-state.js';
import type { Claim, TaskStore } from '../store/task-store.js';
import { MAX_TIMER_MS } from '../util/abort-signals.js';
import { OWNER, RUNNABLE_INDEX, childPath, parentOf, runnableEntryFor } from '../zk/layout.js';
import type { Zk } from '../zk/zk.js';
import { ClaimBook } from './claim-book.js';
import { CandidatePool } from './candidate-pool.js';
import type { Seeker } from './find-task.js';
import { PlanTracker, type PlanStopReason } from './plan-tracker.js';
import { pickHighest } from './priority.js';
import type { ConcurrencyLimits } from '../limits/concurrency-limits.js';
import type { WakeUp } from './wake-up.js';

/**
 * With this many candidates or fewer, a task learned from an index listing is likely seen by the
 * loops of every process at once (a chain's next task, a fan-in's last): its owner is read before
 * it is claimed. With more, random picks rarely meet and the read would only add a round trip.
 */
const CONTENDED_BELOW = 16;

/**
 * Watch-driven dispatch for one worker process. Its loops take tasks from the plans' runnable
 * indexes (`<plan>/runnable/task-N`), which it watches, and wake as soon as an entry appears, a
 * plan's state changes, or the owner of a task they lost to goes away. Candidates are picked at
 * random, so idle workers do not all race for one task. Plans without an index (written by other
 * tools) are still found by the spec's scan.
 *
 * Every watch it sets is on a node that exists, so each one fires, and is gone, at the latest when
 * its plan is deleted: the index's children and a lost race's `owner` node (the plans themselves
 * are watched by its PlanTracker). What it holds for a plan goes when the tracker drops the plan.
 */
export class Dispatcher {
  readonly book = new ClaimBook();
  private readonly candidates = new CandidatePool();
  /** Own priorities of candidates of plans whose tasks may have one (null: none, its plan's applies). */
  private readonly ownPriorities = new Map<string, number | null>();
  private readonly tracker: PlanTracker;
  /** Offers due later, by task: the timer, and whether it puts the task back in its plan's index first. */
  private readonly offeredLater = new Map<
    string,
    { readonly timer: ReturnType<typeof setTimeout>; readonly reindex: boolean }
  >();
  private readonly watchedOwners = new Set<string>();
  /** Tasks that found every slot of their concurrency key held, by the key's limit node: offered again when it changes. */
  private readonly slotWaits = new Map<string, Set<string>>();
  private readonly waitingForSlot = new Set<string>();
  private refreshing: Promise<void> | undefined;
  /** A claim lost since the indexes were last listed: the candidates may be stale. */
  private lostSinceListing = false;
  /** When each parent's plans were last scanned in full: per parent, so that the loops of one pool never use up another's scans. */
  private readonly lastFullScan = new Map<string, number>();

  constructor(
    private readonly zk: Zk,
    private readonly store: TaskStore,
    private readonly wakeUp: WakeUp,
    /** How often one loop of the process still scans indexed plans in full, to find tasks whose index entry a crash lost. */
    private readonly fullScanIntervalMs: number,
    private readonly random: () => number = Math.random,
  ) {
    this.tracker = new PlanTracker(zk, store, {
      changed: () => this.wakeUp.wake(1),
      dropped: (plan) => this.forgetPlan(plan),
    });
    // A new session has none of the old one's watches: look at everything again.
    zk.on('session:started', () => {
      this.watchedOwners.clear();
      this.wakeUp.wake();
    });
  }

  /** True when the plan is ready and has a runnable index this process follows. */
  isIndexed(plan: string): boolean {
    return this.tracker.isIndexed(plan);
  }

  /** True when no task of the plan may start: it failed and its policy is failFast (as far as this process has heard). */
  isStopped(plan: string): boolean {
    return this.tracker.isStopped(plan);
  }

  /** True when a full scan of the plan is of no use until something changes in it. */
  isSettled(plan: string): boolean {
    return this.tracker.isSettled(plan);
  }

  /** A full scan found nothing in the plan that can move without an event this process hears. */
  markSettled(plan: string): void {
    this.tracker.markSettled(plan);
  }

  /** True for one caller per parent every `fullScanIntervalMs`: time to scan the parent's indexed plans in full too. */
  fullScanDue(parent: string): boolean {
    const now = Date.now();
    if (now - (this.lastFullScan.get(parent) ?? 0) < this.fullScanIntervalMs) return false;
    this.lastFullScan.set(parent, now);
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
    if (deleted) this.ownPriorities.delete(task);
  }

  /**
   * The task found every slot of its key held: it is not offered again until the key's limit node
   * changes (a slot freed, the limit raised), which one watch per key and process tells.
   */
  waitForSlot(task: string, limitPath: string, limits: ConcurrencyLimits): void {
    this.waitingForSlot.add(task);
    let waiting = this.slotWaits.get(limitPath);
    if (waiting !== undefined) {
      waiting.add(task);
      return;
    }
    waiting = new Set([task]);
    this.slotWaits.set(limitPath, waiting);
    const fire = (): void => this.slotFreed(limitPath);
    limits.watch(limitPath, fire).then(
      (freeNow) => freeNow && fire(), // freed between the full look and the watch
      fire, // the watch could not be set: look again rather than wait for ever
    );
  }

  /** True while the task waits for a slot of its key (no loop of this process takes it meanwhile). */
  isWaitingForSlot(task: string): boolean {
    return this.waitingForSlot.has(task);
  }

  /** A slot under `limitPath` freed (a watch fired, or this process released one): its waiting tasks are candidates again. */
  slotFreed(limitPath: string): void {
    const waiting = this.slotWaits.get(limitPath);
    if (waiting === undefined) return;
    this.slotWaits.delete(limitPath);
    for (const task of waiting) this.waitingForSlot.delete(task);
    this.offer([...waiting]);
  }

  /** True when this process knows the plan has no pause or cancel that a claim answered now could miss (PlanTracker.knownUnhalted). */
  knownUnhalted(plan: string): boolean {
    return this.tracker.knownUnhalted(plan);
  }

  /** A claim's read of the plan's control node, sent at `readAt`, found none (PlanTracker.controlAbsent). */
  controlAbsent(plan: string, readAt: number): void {
    this.tracker.controlAbsent(plan, readAt);
  }

  /** A claim found the plan paused or cancelled: read its state again (this process may have missed the watch). */
  recheckPlan(plan: string): void {
    this.tracker.reload(plan);
  }

  /** See PlanTracker.onPlanStop. */
  onPlanStop(plan: string, stop: (reason: PlanStopReason) => void): () => void {
    return this.tracker.onPlanStop(plan, stop);
  }

  /** Tasks known to be runnable right now (a finishing worker made them so): tried first, by any loop. */
  offer(tasks: readonly string[]): void {
    for (const task of tasks) {
      this.book.reoffered(task);
      this.candidates.add(task, 'offered');
    }
    if (tasks.length > 0) this.wakeUp.wake(tasks.length);
  }

  /**
   * Makes a task a candidate again at `at` (a retry delay or a local cool-down is over); with
   * `reindex`, first puts it back in its plan's index, from which a failed try removed it so that
   * no worker would take it before its time.
   */
  offerLater(task: string, at: number, reindex: boolean): void {
    const pending = this.offeredLater.get(task);
    // A pending offer that does not put the task back in the index gives way to one that does.
    if (pending !== undefined && (pending.reindex || !reindex)) return;
    if (pending !== undefined) clearTimeout(pending.timer);
    const timer = setTimeout(
      () => {
        this.offeredLater.delete(task);
        void (reindex ? this.store.markRunnable(task) : Promise.resolve())
          .then(() => this.offer([task]))
          .catch(() => undefined); // the full scan finds it anyway
      },
      Math.min(Math.max(0, at - Date.now()), MAX_TIMER_MS),
    );
    timer.unref?.();
    this.offeredLater.set(task, { timer, reindex });
  }

  /** Follows the plans under `parent` (idempotent; again after a new session). */
  follow(parent: string): Promise<void> {
    return this.tracker.follow(parent);
  }

  /** Takes a candidate task: claims it (one write) and returns the claim; undefined when none is left. */
  async take(seeker: Seeker): Promise<Claim | undefined> {
    for (;;) {
      if (seeker.stop.aborted) return undefined;
      // Without priorities every candidate ranks the same: then only an empty hand makes a loop list the indexes.
      if (
        this.candidates.size === 0 ||
        this.lostSinceListing ||
        (this.tracker.anyPriorities() && this.tracker.dirtyMayOutrank(this.bestPriority(seeker)))
      ) {
        this.lostSinceListing = false;
        await this.refresh();
        if (this.candidates.size > 1) this.wakeUp.wake(this.candidates.size - 1); // enough loops for what was found
      }
      await this.loadOwnPriorities();
      let picked = this.pick(seeker);
      if (picked === undefined && this.candidates.size > 0) {
        // Candidates this loop may not take (a shell task its pool leaves to others, one cooling down here) must not
        // keep it from listing the indexes that changed: nothing else would until the next full scan.
        await this.refresh();
        await this.loadOwnPriorities();
        picked = this.pick(seeker);
      }
      if (picked === undefined) return undefined;
      const { task, contended } = picked;
      this.book.reserve(task); // from now on, before the claim's answer: a refresh must not offer it again
      if (contended) {
        let held: boolean;
        try {
          held = await this.ownerPresent(task);
        } catch (error) {
          // No watch was set: give up the reservation, and list its index again, so that it is
          // not left out of this process's candidates (and skipped by its scans) for ever.
          this.book.release(task);
          this.markDirty(parentOf(task));
          throw error;
        }
        if (held) {
          this.book.release(task); // held elsewhere: its owner's watch offers it again when the owner goes
          continue;
        }
      }
      let claim: Claim | undefined;
      try {
        claim = await this.store.claim(task, seeker.workerId, seeker.taskSignal);
      } finally {
        if (claim === undefined) this.book.release(task);
      }
      if (claim !== undefined) return claim;
      // Taken or finished by another process since its index was listed: so may other candidates
      // of that listing be. The indexes that changed are listed again before the next pick (a
      // listing drops the candidates that are gone), rather than each stale one costing a claim.
      this.lostSinceListing = true;
      await this.watchOwner(task);
    }
  }

  /**
   * After losing a task to another worker (or finding it owned in a scan): when its owner goes
   * (done, released or dead), look at the task again. The watch is a data watch on the owner node,
   * which exists when it is set and fires when it goes; an owner already gone sets no watch.
   */
  async watchOwner(task: string): Promise<void> {
    if (!(await this.ownerPresent(task))) await this.reconsider(task);
  }

  /** What this process remembers, for leak checks: plans, candidates, owner watches, timers, stops, held and done tasks. */
  footprint(): {
    plans: number;
    candidates: number;
    ownPriorities: number;
    waitingForSlot: number;
    watchedOwners: number;
    offeredLater: number;
    runningStops: number;
    held: number;
    done: number;
    parents: number;
  } {
    const { plans, runningStops, parents } = this.tracker.footprint();
    return {
      plans,
      candidates: this.candidates.size,
      ownPriorities: this.ownPriorities.size,
      waitingForSlot: this.waitingForSlot.size,
      watchedOwners: this.watchedOwners.size,
      offeredLater: this.offeredLater.size,
      runningStops,
      held: this.book.heldCount,
      done: this.book.doneCount,
      parents,
    };
  }

  /** A task whose owner went, or whose claim found no owner: a candidate when it can be taken, else its plan's index is looked at again. */
  private async reconsider(task: string): Promise<void> {
    const plan = parentOf(task);
    try {
      const listing = await this.store.reads.inspectTask(task);
      if (listing === undefined) {
        // Gone. Its finisher removed its index entry before the task node, unless it crashed in
        // between: a read first, since every process watching the owner gets here, and a delete of
        // a missing node is a refused write that every server logs.
        this.candidates.delete(task);
        if ((await this.zk.exists(runnableEntryFor(task))) !== undefined)
          await this.store.unmarkRunnable(task);
        return;
      }
      const state = classifyTask(listing.children, listing.childVersion);
      if (isClaimable(state) && !this.isStopped(plan)) this.offer([task]);
      else this.markDirty(plan);
    } catch {
      this.markDirty(plan);
    }
  }

  /**
   * The highest priority first, at random among equals (src/worker/priority.ts). Without any
   * priority every candidate ranks the same: then a pick is a few random draws, whatever the number
   * of candidates. `contended`: the task came from an index listing while few candidates are known,
   * so the workers of other processes likely saw it at the same moment (see ownerPresent).
   */
  private pick(seeker: Seeker): { task: string; contended: boolean } | undefined {
    this.dropStoppedPlans();
    const usable = (task: string): boolean => this.isUsable(task, seeker);
    const ranked = this.tracker.anyPriorities() || this.ownPriorities.size > 0;
    const task = ranked
      ? pickHighest(
          this.candidates.all().filter(usable),
          (candidate) => this.priorityOf(candidate),
          this.random,
        )
      : this.candidates.pickRandom(usable, this.random);
    if (task === undefined) return undefined;
    const contended =
      this.candidates.sourceOf(task) === 'index' && this.candidates.size <= CONTENDED_BELOW;
    this.candidates.delete(task);
    return { task, contended };
  }

  /** The highest priority among the candidates a loop could take now; undefined when there is none. */
  private bestPriority(seeker: Seeker): number | undefined {
    this.dropStoppedPlans();
    let best: number | undefined;
    for (const task of this.candidates.all())
      if (this.isUsable(task, seeker))
        best = Math.max(best ?? Number.NEGATIVE_INFINITY, this.priorityOf(task));
    return best;
  }

  /** Nothing of a stopped plan (failFast, paused, cancelled) starts: its candidates go. Stopped plans are rare. */
  private dropStoppedPlans(): void {
    for (const plan of this.tracker.stoppedPlans()) this.candidates.forgetPlan(plan);
  }

  private isUsable(task: string, seeker: Seeker): boolean {
    return (
      !this.book.isHeld(task) &&
      (this.waitingForSlot.size === 0 || !this.waitingForSlot.has(task)) &&
      !seeker.skip?.(task)
    );
  }

  /**
   * Before claiming a contended task: is it held already? A read, where a claim that loses costs a
   * refused write (logged and synced by every server) and two reads. When it is held, its owner
   * node is watched (and the task offered again when the owner goes), as after a lost claim.
   */
  private async ownerPresent(task: string): Promise<boolean> {
    if (this.watchedOwners.has(task)) return true;
    this.watchedOwners.add(task);
    try {
      // Any event ends the watch (one-shot): the task is looked at again, whatever happened to its
      // owner, so that it never stays out of the candidates with nothing watching it.
      await this.zk.getData(childPath(task, OWNER), () => {
        this.watchedOwners.delete(task);
        void this.reconsider(task);
      });
      return true;
    } catch (error) {
      this.watchedOwners.delete(task);
      if (isZkError(error, 'NO_NODE') || (isZkError(error) && error.isConnectionProblem))
        return false; // no owner (or no answer): the claim decides
      throw error;
    }
  }

  /** A task's effective priority: its own, else its plan's. */
  private priorityOf(task: string): number {
    return this.ownPriorities.get(task) ?? this.tracker.planPriority(parentOf(task));
  }

  /**
   * Reads the own priority of the candidates of plans whose tasks may have one (their settings
   * say so), once per task: plans without task priorities cost no read.
   */
  private async loadOwnPriorities(): Promise<void> {
    if (this.ownPriorities.size === 0 && !this.tracker.anyTaskPriorities()) return; // the usual case: nothing to read, nothing to walk
    if (this.ownPriorities.size > 0) {
      // Kept only while the task may still be picked: a candidate, or held here (and then maybe given back).
      for (const task of this.ownPriorities.keys())
        if (!this.candidates.has(task) && !this.book.isHeld(task)) this.ownPriorities.delete(task);
    }
    const unknown = this.candidates
      .all()
      .filter(
        (task) => !this.ownPriorities.has(task) && this.tracker.hasTaskPriorities(parentOf(task)),
      );
    if (unknown.length === 0) return;
    await Promise.all(
      unknown.map(async (task) => {
        const definition = await this.store.reads.readDefinition(task).catch(() => undefined); // unreadable: the claim reports it
        if (this.candidates.has(task)) this.ownPriorities.set(task, definition?.priority ?? null);
      }),
    );
  }

  /** Lists the indexes that changed (one listing at a time for the whole process). */
  private refresh(): Promise<void> {
    this.refreshing ??= (async () => {
      try {
        await Promise.all(this.tracker.takeDirty().map((plan) => this.listIndex(plan)));
      } finally {
        this.refreshing = undefined;
      }
    })();
    return this.refreshing;
  }

  private async listIndex(plan: string): Promise<void> {
    const sentAt = this.candidates.now();
    const listing = await this.zk.tryGetChildren(childPath(plan, RUNNABLE_INDEX), () =>
      this.markDirty(plan),
    );
    if (listing === undefined) {
      this.tracker.indexGone(plan);
      return;
    }
    if (!this.tracker.has(plan)) return; // dropped while the listing was under way
    const listed = new Set(listing.children.map((name) => childPath(plan, name)));
    this.candidates.reconcile(plan, listed, sentAt);
    for (const task of listed) {
      // A task another worker was seen to hold stays in the index while it runs: claiming it again
      // would only fail (a write refused, on every change of the index). Its owner's watch offers it
      // again when the owner goes.
      if (!this.book.isHeldOrDone(task) && !this.watchedOwners.has(task))
        this.candidates.add(task, 'index');
    }
  }

  /** The plan is gone: drop its candidates, retry timers and recently done tasks. */
  private forgetPlan(plan: string): void {
    const prefix = `${plan}/`;
    this.candidates.forgetPlan(plan);
    for (const task of this.ownPriorities.keys())
      if (task.startsWith(prefix)) this.ownPriorities.delete(task);
    for (const [limitPath, waiting] of this.slotWaits) {
      for (const task of waiting) {
        if (!task.startsWith(prefix)) continue;
        waiting.delete(task);
        this.waitingForSlot.delete(task);
      }
      if (waiting.size === 0) this.slotWaits.delete(limitPath); // its watch fires into nothing
    }
    for (const [task, { timer }] of this.offeredLater) {
      if (!task.startsWith(prefix)) continue;
      clearTimeout(timer);
      this.offeredLater.delete(task);
    }
    this.book.forgetPlan(plan);
  }

  private markDirty(plan: string): void {
    this.tracker.markDirty(plan);
    this.wakeUp.wake(1); // it lists the index, and wakes others if it finds more than it takes
  }
}
