import cliProgress from 'cli-progress';
import { formatDuration } from './output.js';

/** How far a plan is, as `wait` shows it. */
export interface Progress {
  readonly done: number;
  readonly total: number;
  readonly failed: number;
  /** Tasks done since `wait` started, for the rate. */
  readonly doneSinceStart: number;
  readonly elapsedMs: number;
  /**
   * `total` is every task of the plan (done from its history); false for a plan without history,
   * where only the tasks left are known: progress then says how many are left, not done/total.
   */
  readonly totalKnown: boolean;
}

export interface ProgressReporter {
  update(progress: Progress): void;
  /** Shows the last progress and ends (the bar's line is finished, a pending line printed). */
  stop(): void;
}

/** Plain lines at most this often when the output is not a terminal. */
const LINE_INTERVAL_MS = 1_000;

/** A cli-progress bar when `stream` is a terminal, else plain lines at most once a second. */
export function createProgressReporter(
  label: string,
  stream: NodeJS.WriteStream,
): ProgressReporter {
  return stream.isTTY ? new BarReporter(label, stream) : new LineReporter(label, stream);
}

function ratePerSecond(progress: Progress): number {
  return progress.elapsedMs > 0 ? (progress.doneSinceStart * 1000) / progress.elapsedMs : 0;
}

function formatRate(progress: Progress): string {
  const rate = ratePerSecond(progress);
  return rate >= 10 ? rate.toFixed(0) : rate.toFixed(1);
}

function estimateMs(progress: Progress): number | undefined {
  const rate = ratePerSecond(progress);
  const left = progress.total - progress.done;
  if (left <= 0) return 0;
  return rate > 0 ? (left / rate) * 1000 : undefined;
}

/** `3/10 done (30%)`, or for a plan without history `7 left (3 finished while waiting)`. */
function formatCount(progress: Progress): string {
  if (!progress.totalKnown)
    return `${progress.total - progress.done} left (${progress.doneSinceStart} finished while waiting)`;
  const percent = progress.total > 0 ? Math.floor((progress.done * 100) / progress.total) : 100;
  return `${progress.done}/${progress.total} done (${percent}%)`;
}

/**
 * The cli-progress bar: `plan-3 ████░░░░ 3/10 done (30%) | 1.5 tasks/s | ETA 5s | 1 failed`. Rate and
 * ETA come from the payload (tasks done since wait started), not from cli-progress's own estimate.
 */
class BarReporter implements ProgressReporter {
  private readonly bar: cliProgress.SingleBar;
  private started = false;

  constructor(label: string, stream: NodeJS.WriteStream) {
    this.bar = new cliProgress.SingleBar(
      {
        format: `${label} {bar} {count} | {rate} tasks/s | ETA {etaText} | {failed} failed`,
        stream,
        barsize: 24,
        hideCursor: true,
        clearOnComplete: false,
        stopOnComplete: false,
        fps: 5,
      },
      cliProgress.Presets.shades_classic,
    );
  }

  update(progress: Progress): void {
    const payload = {
      count: formatCount(progress),
      rate: formatRate(progress),
      etaText: formatEta(progress),
      failed: progress.failed,
    };
    const total = progress.total; // 0 (an empty plan) shows as complete
    if (!this.started) {
      this.bar.start(total, progress.done, payload);
      this.started = true;
      return;
    }
    this.bar.setTotal(total);
    this.bar.update(progress.done, payload);
  }

  stop(): void {
    if (this.started) this.bar.stop();
  }
}

function formatEta(progress: Progress): string {
  const eta = estimateMs(progress);
  if (eta === undefined) return '?';
  return eta < 1000 ? `${Math.ceil(eta / 1000)}s` : formatDuration(eta);
}

/** Plain lines, at most one a second (a change within the second is printed at its end), and the last one at stop. */
class LineReporter implements ProgressReporter {
  private lastPrintedAt = 0;
  private lastLine = '';
  private pending: Progress | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly label: string,
    private readonly stream: NodeJS.WriteStream,
  ) {}

  update(progress: Progress): void {
    this.pending = progress;
    const wait = this.lastPrintedAt + LINE_INTERVAL_MS - Date.now();
    if (wait <= 0) this.flush();
    else this.timer ??= setTimeout(() => this.flush(), wait);
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.flush();
  }

  private flush(): void {
    this.timer = undefined;
    const progress = this.pending;
    this.pending = undefined;
    if (progress === undefined) return;
    const line = this.format(progress);
    if (line === this.lastLine) return;
    this.lastLine = line;
    this.lastPrintedAt = Date.now();
    this.stream.write(`${line}\n`);
  }

  private format(progress: Progress): string {
    return `${this.label}: ${formatCount(progress)}, ${formatRate(progress)} tasks/s, ETA ${formatEta(progress)}, ${progress.failed} failed`;
  }
}
