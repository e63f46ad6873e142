/** The read scheduling of the web view's feeds: triggered runs, coalesced and spaced out. */

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
    const delay = Math.max(
      0,
      this.lastEnd + Math.max(this.minIntervalMs, this.lastDuration) - Date.now(),
    );
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
