/**
 * Watch-driven feeds of the web view: a plan's graph model, and the list of plans under a parent.
 * A feed re-reads when one of its ZooKeeper watches fires (watches are one-shot: each is armed
 * again before the next read, so no change between the read and the re-arm is missed), coalesces
 * bursts to at most one read per interval, and refreshes slowly on its own as a safety net.
 */
import { PlanNotFoundError } from '../errors/plan-errors.js';
import { isZkError } from '../errors/zk-error.js';
import type { PlanSummary, PlanView } from '../plan/plan-view.js';
import { FAILED, HISTORY, OWNER, RUNNABLE_INDEX, childPath, nameOf } from '../zk/layout.js';
import type { WatchEvent, Watcher, ZkClient } from '../zk/zk-client.js';
import { buildModel, diffModels, isEmptyDiff, planRow, type UiDiff, type UiModel, type UiPlanRow } from './ui-model.js';

/** The ZooKeeper calls the feeds set watches with. */
export type WatchClient = Pick<ZkClient, 'getChildren' | 'tryGetChildren' | 'exists'>;

/** Timing of a feed. */
export interface FeedTiming {
  /** Least time between the end of one read and the start of the next (bursts of watch events coalesce). @defaultValue 250 */
  readonly minIntervalMs?: number;
  /** A read at least this often even without events (safety net). @defaultValue 15 000 */
  readonly safetyRefreshMs?: number;
  /** Pause before reading again after a read failed (connection trouble). @defaultValue 1 000 */
  readonly retryMs?: number;
  /**
   * How long a feed outlives its last listener, to be taken up again by the next one (a reload of
   * the page) without arming its watches again: ZooKeeper watches cannot be withdrawn, so those of
   * a closed feed stay set until they fire. It does not read meanwhile. @defaultValue 0
   */
  readonly lingerMs?: number;
}

/**
 * Runs `run` when triggered, never two at once, and starts a run no sooner than `interval` after
 * the previous one ended, `interval` being the larger of `minIntervalMs` and the previous run's
 * duration (a slow read of a big plan does not keep ZooKeeper busy all the time). Triggers that
 * come during a run or a wait fold into the next run.
 */
export class CoalescingRunner {
  private timer: NodeJS.Timeout | undefined;
  private safety: NodeJS.Timeout | undefined;
  private running = false;
  private pending = false;
  private closed = false;
  private lastEnd = Number.NEGATIVE_INFINITY;
  private lastDuration = 0;
  /** Runs started so far. */
  runs = 0;

  constructor(
    private readonly run: () => Promise<void>,
    private readonly minIntervalMs: number,
    private readonly safetyRefreshMs: number,
  ) {}

  /** Runs at once, then on triggers and at the safety interval. */
  start(): void {
    if (this.closed || this.safety !== undefined) return;
    this.safety = setInterval(() => this.trigger(), this.safetyRefreshMs);
    this.safety.unref();
    this.trigger();
  }

  trigger(): void {
    if (this.closed) return;
    if (this.running) {
      this.pending = true;
      return;
    }
    if (this.timer !== undefined) return;
    const delay = Math.max(0, this.lastEnd + Math.max(this.minIntervalMs, this.lastDuration) - Date.now());
    this.timer = setTimeout(() => void this.runNow(), delay);
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
    clearInterval(this.safety);
    this.timer = undefined;
    this.safety = undefined;
  }

  private async runNow(): Promise<void> {
    this.timer = undefined;
    if (this.closed) return;
    this.running = true;
    this.pending = false;
    this.runs += 1;
    const started = Date.now();
    try {
      await this.run();
    } catch {
      // `run` reports its own failures.
    } finally {
      this.running = false;
      this.lastEnd = Date.now();
      this.lastDuration = this.lastEnd - started;
    }
    if (this.pending) this.trigger();
  }
}

/** One-shot watches by key: a key is armed until its watch fires (or its arming fails). */
export class WatchSet {
  private readonly armed = new Set<string>();

  constructor(private readonly onFire: (key: string, event: WatchEvent) => void) {}

  get size(): number {
    return this.armed.size;
  }

  has(key: string): boolean {
    return this.armed.has(key);
  }

  /** Sets the watch with `set` unless `key` is armed already. */
  async arm(key: string, set: (watcher: Watcher) => Promise<unknown>): Promise<void> {
    if (this.armed.has(key)) return;
    this.armed.add(key);
    let fired = false;
    const watcher: Watcher = (event) => {
      if (fired) return;
      fired = true;
      this.armed.delete(key);
      this.onFire(key, event);
    };
    try {
      await set(watcher);
    } catch (error) {
      if (!fired) this.armed.delete(key);
      throw error;
    }
  }

  /** Forgets every key: their watches may still fire, into a feed that ignores them. */
  clear(): void {
    this.armed.clear();
  }
}

/** A child watch on `path`, or an existence watch when it does not exist; resolves whether it exists. */
async function watchChildren(zk: WatchClient, path: string, watcher: Watcher): Promise<boolean> {
  const listing = await zk.tryGetChildren(path, watcher);
  if (listing !== undefined) return true;
  await zk.exists(path, watcher); // sets a watch whether or not the node exists
  return false;
}

type Listener<M> = (message: M) => void;

/** What a feed's listeners share: start on the first, close on the last (then `onIdle`). */
abstract class Feed<M> {
  protected readonly listeners = new Set<Listener<M>>();
  protected readonly watches: WatchSet;
  protected readonly runner: CoalescingRunner;
  protected closed = false;
  private retryTimer: NodeJS.Timeout | undefined;
  private lingerTimer: NodeJS.Timeout | undefined;
  private readonly retryMs: number;
  private readonly lingerMs: number;

  constructor(
    protected readonly zk: WatchClient,
    timing: FeedTiming,
    private readonly onIdle: () => void,
  ) {
    this.retryMs = timing.retryMs ?? 1_000;
    this.lingerMs = timing.lingerMs ?? 0;
    this.watches = new WatchSet(() => this.runner.trigger());
    this.runner = new CoalescingRunner(() => this.refreshWhileWatched(), timing.minIntervalMs ?? 250, timing.safetyRefreshMs ?? 15_000);
  }

  /** Adds a listener (sent the current state at once when there is one); returns its removal. */
  subscribe(listener: Listener<M>): () => void {
    if (this.closed) throw new Error('feed closed');
    const lingering = this.lingerTimer !== undefined;
    clearTimeout(this.lingerTimer);
    this.lingerTimer = undefined;
    this.listeners.add(listener);
    const current = this.current();
    if (current !== undefined) listener(current);
    this.runner.start();
    if (lingering) this.runner.trigger(); // what it holds may be stale: read again
    return () => {
      if (!this.listeners.delete(listener) || this.listeners.size > 0 || this.closed) return;
      if (this.lingerMs <= 0) {
        this.close();
        return;
      }
      this.lingerTimer = setTimeout(() => this.close(), this.lingerMs);
      this.lingerTimer.unref();
    };
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** Reads done so far. */
  get reads(): number {
    return this.runner.runs;
  }

  /** Keys of the watches armed right now. */
  get armedWatches(): number {
    return this.watches.size;
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.runner.close();
    this.watches.clear();
    clearTimeout(this.retryTimer);
    clearTimeout(this.lingerTimer);
    this.listeners.clear();
    this.onIdle();
  }

  /** Reads only while someone listens (a lingering feed waits for its next listener). */
  private async refreshWhileWatched(): Promise<void> {
    if (this.listeners.size === 0) return;
    await this.refresh();
  }

  protected broadcast(message: M): void {
    for (const listener of [...this.listeners]) listener(message);
  }

  /** Asks for a read after `retryMs` (the last one failed). */
  protected retrySoon(): void {
    if (this.closed || this.retryTimer !== undefined) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      this.runner.trigger();
    }, this.retryMs);
  }

  /** The message a new listener gets first, if any. */
  protected abstract current(): M | undefined;
  protected abstract refresh(): Promise<void>;
}

/** What a plan's feed tells its listeners. */
export type PlanFeedMessage =
  | { readonly type: 'snapshot'; readonly model: UiModel }
  | { readonly type: 'diff'; readonly diff: UiDiff }
  | { readonly type: 'gone'; readonly plan: string }
  | { readonly type: 'problem'; readonly message: string };

/** Task states during which a task has, or will soon get, an `owner` node worth watching. */
const OWNER_WATCHED = new Set(['runnable', 'retrying', 'running', 'finishing']);

/**
 * A plan's graph model, kept current from watches: a child watch on the plan (tasks added and
 * removed, `ready`, `failed`), on `<plan>/history` (tasks finished) and on `<plan>/runnable`
 * (tasks whose inputs all arrived), an existence watch on `<plan>/failed` (each failure rewrites
 * it), and one on the `owner` of each task that is runnable or running (claims and releases).
 */
export class PlanFeed extends Feed<PlanFeedMessage> {
  private model: UiModel | undefined;
  private latestView: { readonly view: PlanView; readonly at: number } | undefined;
  private retryAtTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly source: { describePlan(plan: string): Promise<PlanView>; readonly zk: WatchClient },
    readonly plan: string,
    timing: FeedTiming = {},
    onIdle: () => void = () => undefined,
  ) {
    super(source.zk, timing, onIdle);
  }

  /** The last view read and when (Date.now()), for the task panel. */
  get latest(): { readonly view: PlanView; readonly at: number } | undefined {
    return this.latestView;
  }

  override close(): void {
    clearTimeout(this.retryAtTimer);
    super.close();
  }

  protected current(): PlanFeedMessage | undefined {
    return this.model && { type: 'snapshot', model: this.model };
  }

  protected async refresh(): Promise<void> {
    const { plan } = this;
    try {
      await Promise.all([
        this.watches.arm('plan', (watcher) => this.zk.getChildren(plan, watcher)),
        this.watches.arm('history', (watcher) => watchChildren(this.zk, childPath(plan, HISTORY), watcher)),
        this.watches.arm('runnable', (watcher) => watchChildren(this.zk, childPath(plan, RUNNABLE_INDEX), watcher)),
        this.watches.arm('failed', (watcher) => this.zk.exists(childPath(plan, FAILED), watcher)),
      ]);
      const view = await this.source.describePlan(plan);
      if (this.closed) return;
      await this.armOwners(view);
      if (this.closed) return;
      this.latestView = { view, at: Date.now() };
      this.publish(view);
    } catch (error) {
      if (this.closed) return;
      if (error instanceof PlanNotFoundError || (isZkError(error, 'NO_NODE') && error.path === plan)) {
        this.broadcast({ type: 'gone', plan });
        this.close();
        return;
      }
      this.broadcast({ type: 'problem', message: error instanceof Error ? error.message : String(error) });
      this.retrySoon();
    }
  }

  private async armOwners(view: PlanView): Promise<void> {
    const live = view.tasks.filter((task) => OWNER_WATCHED.has(task.state));
    await Promise.all(live.map((task) => this.watches.arm(`owner:${task.name}`, (watcher) => this.zk.exists(childPath(task.task, OWNER), watcher))));
    // A task waiting for its next try becomes runnable with no ZooKeeper event: read again then.
    const nextTry = Math.min(...view.tasks.flatMap((task) => (task.state === 'retrying' && task.attempts ? [task.attempts.nextTryAt.getTime()] : [])));
    clearTimeout(this.retryAtTimer);
    if (Number.isFinite(nextTry)) {
      this.retryAtTimer = setTimeout(() => this.runner.trigger(), Math.max(0, nextTry - Date.now()) + 50);
      this.retryAtTimer.unref();
    }
  }

  private publish(view: PlanView): void {
    const previous = this.model;
    const model = buildModel(view, previous);
    this.model = model;
    if (previous === undefined) {
      this.broadcast({ type: 'snapshot', model });
      return;
    }
    const diff = diffModels(previous, model);
    if (!isEmptyDiff(diff, previous.status)) this.broadcast({ type: 'diff', diff });
  }
}

/** What the plans feed tells its listeners. */
export type PlansFeedMessage = { readonly type: 'plans'; readonly plans: readonly UiPlanRow[] } | { readonly type: 'problem'; readonly message: string };

/**
 * The plans under a parent with their state and progress, kept current from a child watch on the
 * parent and, per plan, child watches on the plan and its history and an existence watch on its
 * `failed` marker.
 */
export class PlansFeed extends Feed<PlansFeedMessage> {
  private rows: readonly UiPlanRow[] | undefined;
  private lastJson = '';
  private readonly historyKept = new Map<string, boolean>();

  constructor(
    private readonly source: { listPlans(parent: string): Promise<PlanSummary[]>; readonly zk: WatchClient },
    readonly parent: string,
    timing: FeedTiming = {},
    onIdle: () => void = () => undefined,
  ) {
    super(source.zk, { minIntervalMs: 1_000, ...timing }, onIdle);
  }

  protected current(): PlansFeedMessage | undefined {
    return this.rows && { type: 'plans', plans: this.rows };
  }

  protected async refresh(): Promise<void> {
    const { parent } = this;
    try {
      await this.watches.arm('parent', (watcher) => watchChildren(this.zk, parent, watcher));
      let summaries: PlanSummary[];
      try {
        summaries = await this.source.listPlans(parent);
      } catch (error) {
        if (!(error instanceof PlanNotFoundError)) throw error;
        summaries = []; // no parent yet: its existence watch tells when it comes
      }
      await Promise.all(
        summaries.map(async ({ plan }) => {
          const name = nameOf(plan);
          await Promise.all([
            this.watches.arm(`plan:${name}`, (watcher) => watchChildren(this.zk, plan, watcher)),
            this.watches.arm(`history:${name}`, async (watcher) => this.historyKept.set(plan, await watchChildren(this.zk, childPath(plan, HISTORY), watcher))),
            this.watches.arm(`failed:${name}`, (watcher) => this.zk.exists(childPath(plan, FAILED), watcher)),
          ]);
        }),
      );
      if (this.closed) return;
      const rows = summaries.map((summary) => planRow(summary, summary.historyKept ?? this.historyKept.get(summary.plan) === true));
      const json = JSON.stringify(rows);
      this.rows = rows;
      if (json === this.lastJson) return;
      this.lastJson = json;
      this.broadcast({ type: 'plans', plans: rows });
    } catch (error) {
      if (this.closed) return;
      this.broadcast({ type: 'problem', message: error instanceof Error ? error.message : String(error) });
      this.retrySoon();
    }
  }
}
