/**
 * The base of the web view's watch-driven feeds (src/ui/plan-feed.ts): listeners, timing, a read
 * on each watch that fires (coalesced) and a slow safety refresh, retries after failures.
 */
import { CoalescingRunner } from './coalescing-runner.js';
import { WatchSet, type WatchClient } from '../zk/recipes/watch-set.js';
import { DEFAULTS } from '../config/defaults.js';

/** Timing of a feed. */
export interface FeedTiming {
  /** Least time between the end of one read and the start of the next (bursts of watch events coalesce). @defaultValue DEFAULTS.uiFeeds.minIntervalMs (250; the plans list: DEFAULTS.uiFeeds.plansListMinIntervalMs, 1 000) */
  readonly minIntervalMs?: number;
  /** A read at least this often even without events (safety net). @defaultValue DEFAULTS.uiFeeds.safetyRefreshMs (15 000) */
  readonly safetyRefreshMs?: number;
  /** Pause before reading again after a read failed (connection trouble). @defaultValue DEFAULTS.uiFeeds.retryMs (1 000) */
  readonly retryMs?: number;
  /**
   * How long a feed outlives its last listener, to be taken up again by the next one (a reload of
   * the page) without arming its watches again: ZooKeeper watches cannot be withdrawn, so those of
   * a closed feed stay set until they fire. It does not read meanwhile. @defaultValue 0 (the web view's: DEFAULTS.uiFeeds.lingerMs, 30 000)
   */
  readonly lingerMs?: number;
}

/** A feed's listener, told each message. */
export type Listener<M> = (message: M) => void;

/** What a feed's listeners share: start on the first, close on the last (then `onIdle`). */
export abstract class Feed<M> {
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
    this.retryMs = timing.retryMs ?? DEFAULTS.uiFeeds.retryMs;
    this.lingerMs = timing.lingerMs ?? 0;
    this.watches = new WatchSet(() => this.runner.trigger());
    this.runner = new CoalescingRunner(
      () => this.refreshWhileWatched(),
      timing.minIntervalMs ?? DEFAULTS.uiFeeds.minIntervalMs,
      timing.safetyRefreshMs ?? DEFAULTS.uiFeeds.safetyRefreshMs,
    );
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
