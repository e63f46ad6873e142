import { isZkError } from '../errors/zk-error.js';
import { OWNER, READY, RUNNABLE_INDEX, childPath, parentOf } from '../zk/layout.js';
import type { Zk } from '../zk/zk.js';
import type { Seeker } from './find-task.js';
import type { Claim, TaskStore } from '../store/task-store.js';
import type { WakeUp } from './wake-up.js';

/** How often one loop of the process still scans indexed plans in full, to find tasks whose index entry a crash lost. */
const FULL_SCAN_INTERVAL_MS = 10_000;

/** How many finished tasks a process remembers, to keep stale index entries out of its candidates. */
const RECENTLY_DONE_LIMIT = 50_000;

interface IndexedPlan {
  /** The index changed since it was last listed (or was never listed). */
  dirty: boolean;
}

/**
 * Watch-driven dispatch for one worker process: instead of scanning every task of every plan,
 * its loops take tasks from the plans' runnable indexes (`<plan>/runnable/task-N`), which they
 * watch, and wake as soon as an entry appears, a plan becomes ready, or the owner of a task they
 * lost to goes away. Candidates are picked at random, so idle workers do not all race for one task.
 * Plans without an index (written by other tools) are still found by the spec's scan.
 */
export class Dispatcher {
  private readonly candidates = new Set<string>();
  /** Tasks a loop of this process holds: their index entries stay until done, but are no candidates. */
  private readonly heldHere = new Set<string>();
  /** Tasks this process finished lately: an index listing sent before their entry went may still name them. */
  private readonly doneHere = new Set<string>();
  private readonly plans = new Map<string, IndexedPlan>();
  private readonly watchedParents = new Set<string>();
  private readonly following = new Map<string, Promise<void>>();
  /** Tasks with an `offerLater` timer running. */
  private readonly offeredLater = new Set<string>();
  private readonly watchedOwners = new Set<string>();
  private refreshing: Promise<void> | undefined;
  private lastFullScan = 0;

  constructor(
    private readonly zk: Zk,
    private readonly store: TaskStore,
    private readonly wakeUp: WakeUp,
  ) {
    // A new session has none of the old one's watches: look at everything again.
    zk.on('session:started', () => {
      this.watchedParents.clear();
      this.following.clear();
      this.watchedOwners.clear();
      this.plans.clear();
      this.wakeUp.wake();
    });
  }

  /** True when the plan has a runnable index this process follows. */
  isIndexed(plan: string): boolean {
    return this.plans.has(plan);
  }

  /** True for one caller every FULL_SCAN_INTERVAL_MS: time to scan indexed plans in full too. */
  fullScanDue(): boolean {
    const now = Date.now();
    if (now - this.lastFullScan < FULL_SCAN_INTERVAL_MS) return false;
    this.lastFullScan = now;
    return true;
  }

  /** True when a loop of this process holds the task, or finished it lately: no use claiming it. */
  isHeldOrDone(task: string): boolean {
    return this.heldHere.has(task) || this.doneHere.has(task);
  }

  /** Reserves a task a scan is about to claim; false when a loop of this process holds it already. */
  reserve(task: string): boolean {
    if (this.heldHere.has(task)) return false;
    this.heldHere.add(task);
    return true;
  }

  /** Undoes `reserve` after a claim that failed. */
  unreserve(task: string): void {
    this.heldHere.delete(task);
  }

  /** A loop of this process holds a task (found by a scan): not a candidate for the others. */
  hold(task: string): void {
    this.heldHere.add(task);
    this.candidates.delete(task);
  }

  /** A loop of this process is done with a task it held; `deleted`: the task node is gone (done). */
  letGo(task: string, deleted: boolean): void {
    this.heldHere.delete(task);
    if (!deleted) return;
    if (this.doneHere.size >= RECENTLY_DONE_LIMIT) this.doneHere.clear();
    this.doneHere.add(task);
  }

  /** Tasks known to be runnable right now (a finishing worker made them so): tried first, by any loop. */
  offer(tasks: readonly string[]): void {
    for (const task of tasks) {
      this.doneHere.delete(task); // offered again (e.g. its retry delay is over): a candidate once more
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
    this.offeredLater.add(task);
    const timer = setTimeout(() => {
      this.offeredLater.delete(task);
      void (reindex ? this.store.markRunnable(task) : Promise.resolve())
        .then(() => this.offer([task]))
        .catch(() => undefined); // the full scan finds it anyway
    }, Math.max(0, at - Date.now()));
    timer.unref();
  }

  /** Follows the plans under `parent` (idempotent; again after a new session). */
  follow(parent: string): Promise<void> {
    // Every loop waits for the same first look, so none scans a plan the index is about to cover.
    let following = this.following.get(parent);
    if (following === undefined) {
      following = this.startFollowing(parent);
      this.following.set(parent, following);
      following.catch(() => this.following.delete(parent));
    }
    return following;
  }

  private async startFollowing(parent: string): Promise<void> {
    this.watchedParents.add(parent);
    try {
      const listing = await this.zk.tryGetChildren(parent, () => this.rewatchParent(parent));
      if (listing === undefined) {
        // The parent does not exist yet: wait for it to be created.
        await this.zk.exists(parent, () => this.rewatchParent(parent));
        return;
      }
      await Promise.all(listing.children.map((name) => this.followPlan(childPath(parent, name))));
    } catch (error) {
      this.watchedParents.delete(parent);
      throw error;
    }
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
      this.heldHere.add(task); // from now on, before the claim's answer: a refresh must not offer it again
      let claim: Claim | undefined;
      try {
        claim = await this.store.claim(task, seeker.workerId, seeker.taskSignal);
      } finally {
        if (claim === undefined) this.heldHere.delete(task);
      }
      if (claim !== undefined) return claim;
      await this.watchOwner(task);
    }
  }

  private pick(seeker: Seeker): string | undefined {
    const usable = [...this.candidates].filter((task) => !this.heldHere.has(task) && !seeker.skip?.(task) && !seeker.skipPlan?.(parentOf(task)));
    if (usable.length === 0) return undefined;
    const task = usable[Math.floor(Math.random() * usable.length)] as string;
    this.candidates.delete(task);
    return task;
  }

  /** Lists the indexes that changed (one listing at a time for the whole process). */
  private refresh(): Promise<void> {
    this.refreshing ??= (async () => {
      try {
        const dirty = [...this.plans].filter(([, plan]) => plan.dirty).map(([path]) => path);
        await Promise.all(dirty.map((plan) => this.listIndex(plan)));
      } finally {
        this.refreshing = undefined;
      }
    })();
    return this.refreshing;
  }

  private async listIndex(plan: string): Promise<void> {
    const state = this.plans.get(plan);
    if (state === undefined) return;
    state.dirty = false;
    const listing = await this.zk.tryGetChildren(childPath(plan, RUNNABLE_INDEX), () => this.markDirty(plan));
    if (listing === undefined) {
      this.plans.delete(plan); // the plan (or its index) is gone
      return;
    }
    for (const name of listing.children) {
      const task = childPath(plan, name);
      if (!this.heldHere.has(task) && !this.doneHere.has(task)) this.candidates.add(task);
    }
  }

  private async followPlan(plan: string): Promise<void> {
    if (this.plans.has(plan)) return;
    const [ready, index] = await Promise.all([
      this.zk.exists(childPath(plan, READY), (event) => {
        if (event.type === 'created') void this.followPlan(plan).catch(() => undefined);
      }),
      this.zk.exists(childPath(plan, RUNNABLE_INDEX)),
    ]);
    if (ready === undefined || index === undefined || this.plans.has(plan)) return;
    this.plans.set(plan, { dirty: true });
    this.wakeUp.wake(1);
  }

  private rewatchParent(parent: string): void {
    this.watchedParents.delete(parent);
    this.following.delete(parent);
    void this.follow(parent).catch(() => undefined);
    this.wakeUp.wake(1);
  }

  private markDirty(plan: string): void {
    const state = this.plans.get(plan);
    if (state) state.dirty = true;
    this.wakeUp.wake(1); // it lists the index, and wakes others if it finds more than it takes
  }

  /**
   * After losing a task to another worker (or finding it owned in a scan): when its owner goes
   * (done, released or dead), try it again.
   */
  async watchOwner(task: string): Promise<void> {
    if (this.watchedOwners.has(task)) return;
    this.watchedOwners.add(task);
    const onGone = (): void => {
      this.watchedOwners.delete(task);
      // A finished task lost `ready` before its owner went: only an abandoned one is worth a claim.
      void this.zk
        .exists(childPath(task, READY))
        .then((ready) => (ready ? this.offer([task]) : this.markDirty(parentOf(task))))
        .catch(() => this.markDirty(parentOf(task)));
    };
    try {
      const stat = await this.zk.exists(childPath(task, OWNER), (event) => {
        if (event.type === 'deleted' || event.type === 'session-lost') onGone();
      });
      if (stat === undefined) {
        // No owner: the task is gone (drop its stale index entry) or was released meanwhile.
        if ((await this.zk.exists(task)) === undefined) await this.store.unmarkRunnable(task);
        onGone();
      }
    } catch (error) {
      this.watchedOwners.delete(task);
      if (!isZkError(error) || !error.isConnectionProblem) throw error;
    }
  }
}
