/**
 * Runs one job's function on one job worker, with the share of items it holds: `continuous` (one
 * run for as long as the share stays the same, started again when it changes or the run returns),
 * `{ everyMs }` or `{ cron }` (a run at each due time, and at each trigger). One run at a time: a
 * change of share aborts the run in progress, and the next starts only after it has returned, so
 * the worker releases an item only once no run of it is left (`activeItems`).
 *
 * Besides ticks, a runner owes runs: a trigger's; the catch-up of ticks that came while a run ran
 * (misfire: one run right after it, or none with `misfire: 'skip'`); a failover (the items just
 * taken were in a run their previous holder never ended); a retry of a run that threw (up to
 * `job.retries`, after a pause that doubles with each failure in a row; a tick that comes first
 * replaces it). Each run writes its record (history) before the function starts and after it ends.
 */
import { sleepUnless } from '../util/abort-signals.js';
import type { TaskLogger } from '../logs/task-log-types.js';
import type { JobContext, JobFunction, JobItem } from './job-context.js';
import type { StoredJob } from './job-definition.js';
import type { JobRunCause, JobRunMisfire, JobRunOutcome } from './job-run-record.js';
import { latestTickUpTo, nextDueTime, retryDelayMs } from './job-run-policy.js';
import { startJobRunSpan, tracingLoading } from '../tracing/tracing.js';
import { endJobRunSpan } from '../tracing/job-run-span.js';

/** What a run is started for: its cause, its try, the time it was due, and the run a failover runs again. */
export interface RunStart {
  readonly items: readonly JobItem[];
  readonly cause: JobRunCause;
  readonly attempt: number;
  readonly firedAt?: Date;
  readonly failoverOf?: string;
}

/** A started run's log, and how it ended (it writes the end of the run's record). */
export interface RunRecorder {
  readonly log: TaskLogger;
  /** `final`: a failed run with no retry owed before the next tick; `endedAt`: when its function ended (wall clock, ms), the time a retry's pause counts from. */
  ended(
    outcome: JobRunOutcome,
    error: unknown,
    misfire: JobRunMisfire | undefined,
    final: boolean,
    endedAt: number,
  ): Promise<void>;
}

export interface RunnerHost {
  readonly workerId: string;
  /** The jobs' parent path (the run's span names it). */
  readonly jobs: string;
  /** Wall clock (ms). */
  now(): number;
  /** Whether every lease of `items` is still held right now, by the monotonic clock. */
  holding(job: string, items: readonly JobItem[]): boolean;
  /** A run is about to start: its record is written (history). Never rejects. */
  runStarting(job: StoredJob, start: RunStart): Promise<RunRecorder>;
  /** A run of `job` ended (its items may now be released). */
  runEnded(job: string): void;
  /** A tick came while the previous run still ran: caught up once after it, or skipped (`job.misfire`). */
  onMisfire(job: string, tick: Date, handling: JobRunMisfire['handling']): void;
  /** After a run that threw (doubling with each failure in a row) or a continuous run that returned on its own, before the next. */
  readonly restartDelayMs: number;
  /** The longest pause after runs that threw. */
  readonly maxRestartDelayMs: number;
}

type RunOutcome = 'aborted' | 'returned' | 'threw';

/** How many interrupted runs a runner remembers having failed over (a bound: its set is cleared beyond it). */
const MAX_REMEMBERED_FAILOVERS = 1_000;

/** A run due now: a tick's, or one owed. */
interface DueRun {
  readonly cause: Exclude<JobRunCause, 'continuous'>;
  readonly attempt: number;
  readonly firedAt: Date;
  readonly failoverOf?: string;
}

/** A run owed now or at `at`: a trigger, a misfire's catch-up, a failover, or a retry. */
interface OwedRun {
  readonly cause: Exclude<JobRunCause, 'tick' | 'continuous'>;
  readonly attempt: number;
  readonly firedAt: Date;
  readonly failoverOf?: string;
  /** Not before (wall clock, ms): retries only. */
  readonly at?: number;
}

export class JobRunner {
  private share: readonly JobItem[] = [];
  private current:
    { readonly controller: AbortController; readonly items: readonly JobItem[] } | undefined;
  private wakeUp = new AbortController();
  private stopped = false;
  private triggers = 0;
  private nextDue: number | undefined;
  /** A run owed at once (failover, misfire) or at its time (retry); one at a time, the first owed kept. */
  private owed: OwedRun | undefined;
  /** Runs that threw in a row (the pause before the next grows with it). */
  private failuresInARow = 0;
  /** Interrupted runs this runner has owed a failover for, with the items it was owed for. */
  private readonly failedOver = new Map<string, Set<string>>();
  /** Counts the changes of mode or function: an owed run is not owed again across one. */
  private definitions = 0;
  private readonly loop: Promise<void>;

  constructor(
    private job: StoredJob,
    private fn: JobFunction,
    private readonly host: RunnerHost,
  ) {
    this.loop = this.run();
  }

  /** The job's definition as read now: a new function or mode aborts the run in progress, and the next run uses them. */
  update(job: StoredJob, fn: JobFunction): void {
    const modeChanged = JSON.stringify(job.mode) !== JSON.stringify(this.job.mode);
    const fnChanged = fn !== this.fn;
    this.job = job;
    if (!modeChanged && !fnChanged) return;
    this.definitions += 1;
    this.fn = fn;
    this.nextDue = undefined;
    this.owed = undefined;
    this.abortRun("the job's definition changed");
    this.wake();
  }

  /** The items held now: a run of another share is aborted, and the next run takes this one. */
  setShare(items: readonly JobItem[]): void {
    if (sameShare(items, this.share)) return;
    this.share = items;
    if (this.current !== undefined && !sameShare(items, this.current.items))
      this.current.controller.abort(new Error('the share of items changed'));
    this.wake();
  }

  /** Aborts the run in progress at once (a lease was lost, the session expired). */
  abortRun(reason: string): void {
    this.current?.controller.abort(new Error(reason));
  }

  /** A run now (everyMs and cron modes). */
  trigger(): void {
    this.triggers += 1;
    this.wake();
  }

  /**
   * `items`, just taken, were in a run their previous holder never ended (`run`, its node name):
   * run the share again at once, unless the job says `failover: false` or is continuous (it
   * restarts with its new share anyway). Each item of an interrupted run is failed over once,
   * however many passes its items are taken in.
   */
  failover(run: string, items: readonly string[]): void {
    if (this.job.mode === 'continuous' || !this.job.failover) return;
    const done = this.failedOver.get(run) ?? new Set<string>();
    const fresh = items.filter((item) => !done.has(item));
    if (fresh.length === 0) return;
    if (!this.failedOver.has(run) && this.failedOver.size >= MAX_REMEMBERED_FAILOVERS)
      this.failedOver.clear();
    for (const item of fresh) done.add(item);
    this.failedOver.set(run, done);
    this.owe({
      cause: 'failover',
      attempt: 1,
      firedAt: new Date(this.host.now()),
      failoverOf: run,
    });
  }

  /** Item ids of the run in progress, until it has returned. */
  activeItems(): ReadonlySet<string> {
    return new Set(this.current?.items.map((item) => item.id) ?? []);
  }

  get running(): boolean {
    return this.current !== undefined;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.abortRun('the job worker is stopping');
    this.wake();
    await this.loop;
  }

  private owe(run: OwedRun): void {
    const owed = this.owed;
    // A run owed at once replaces a retry that waits: the run it makes covers the same items. A
    // failover replaces any other owed run, so that the run that covers it is recorded as one.
    if (
      owed === undefined ||
      (owed.at !== undefined && run.at === undefined) ||
      (run.cause === 'failover' && owed.cause !== 'failover')
    )
      this.owed = run;
    this.wake();
  }

  private wake(): void {
    this.wakeUp.abort();
  }

  /** Sleeps until `ms` have passed or something changed since the loop last looked (a wake is never lost). */
  private async sleep(ms: number): Promise<void> {
    await sleepUnless(ms, this.wakeUp.signal);
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      // Cleared here, before the loop looks at the share, the owed run and the ticks: a change that
      // comes after this point wakes the sleep it leads to, however soon that sleep starts.
      if (this.wakeUp.signal.aborted) this.wakeUp = new AbortController();
      const mode = this.job.mode;
      if (mode === 'continuous') {
        if (this.share.length === 0) {
          await this.sleep(Number.POSITIVE_INFINITY);
          continue;
        }
        const outcome = await this.runOnce({ items: this.share, cause: 'continuous', attempt: 1 });
        if (outcome !== 'aborted' && !this.stopped) await this.sleep(this.pauseAfter(outcome));
        continue;
      }
      const now = this.host.now();
      if (this.triggers > 0) {
        this.triggers = 0;
        this.owe({ cause: 'trigger', attempt: 1, firedAt: new Date(now) });
      }
      this.nextDue ??= nextDueTime(mode, now);
      const owed = this.owed;
      if (owed !== undefined && (owed.at ?? now) <= now) {
        this.owed = undefined;
        if (this.share.length > 0) await this.runDue(owed);
        continue;
      }
      if (this.nextDue === undefined) {
        // A cron expression that never fires again: only owed runs are left.
        await this.sleep(owed?.at === undefined ? Number.POSITIVE_INFINITY : owed.at - now);
        continue;
      }
      if (this.nextDue > now) {
        await this.sleep(Math.min(this.nextDue, owed?.at ?? Number.POSITIVE_INFINITY) - now);
        continue;
      }
      // The tick is due: a retry still waiting for its time is replaced by it.
      if (owed?.at !== undefined) this.owed = undefined;
      const due = this.nextDue;
      this.nextDue = nextDueTime(mode, Math.max(due, now)); // times passed before the run started (a late wake-up) are not misfires
      if (this.share.length > 0)
        await this.runDue({ cause: 'tick', attempt: 1, firedAt: new Date(due) });
    }
  }

  /** One due run (its catch-up of a tick it overran, and its retry, are owed in runOnce); an owed run cut short is owed again. */
  private async runDue(due: DueRun): Promise<void> {
    const definition = this.definitions;
    const outcome = await this.runOnce({ items: this.share, ...due });
    if (this.stopped || this.job.mode === 'continuous') return;
    // A run owed for a reason (a failover, a catch-up, a trigger, a retry) that a change of share cut
    // short, an item taken meanwhile or one taken away, is owed again with the share as it is now.
    // A tick's run is not: the next tick comes anyway. Nor is one whose job changed.
    if (
      outcome === 'aborted' &&
      due.cause !== 'tick' &&
      definition === this.definitions &&
      this.share.length > 0
    ) {
      this.owe({
        cause: due.cause,
        attempt: due.attempt,
        firedAt: due.firedAt,
        ...(due.failoverOf === undefined ? {} : { failoverOf: due.failoverOf }),
      });
    }
  }

  /**
   * After a timed run that threw: a retry owed at its time, if tries are left and it comes before
   * the next tick (a tick that comes first replaces it); true when one is owed. The run's record
   * says `final` otherwise.
   */
  private oweRetry(start: RunStart, endedAt: number): boolean {
    const mode = this.job.mode;
    if (mode === 'continuous' || start.cause === 'continuous' || start.attempt > this.job.retries)
      return false;
    const at = endedAt + this.pauseAfter('threw');
    if (this.nextDue !== undefined && at >= this.nextDue) return false;
    const retry: OwedRun = {
      cause: 'retry',
      attempt: start.attempt + 1,
      firedAt: start.firedAt ?? new Date(endedAt),
      at,
      ...(start.failoverOf === undefined ? {} : { failoverOf: start.failoverOf }),
    };
    this.owe(retry);
    return this.owed === retry;
  }

  /** After an aborted timed run: the ticks it overran are passed over, not run late. */
  private passOverOverrunTicks(): void {
    const mode = this.job.mode;
    const now = this.host.now();
    if (mode !== 'continuous' && this.nextDue !== undefined && this.nextDue <= now)
      this.nextDue = nextDueTime(mode, now);
  }

  /**
   * After a run of a timed job: the latest tick that came while it ran, if one did, caught up once
   * at once (owed) or skipped, as the job's `misfire` says; the next due time moves past now.
   */
  private misfireAfterRun(): JobRunMisfire | undefined {
    const mode = this.job.mode;
    const now = this.host.now();
    if (mode === 'continuous' || this.nextDue === undefined || this.nextDue > now) return undefined;
    const tick = new Date(latestTickUpTo(mode, this.nextDue, now));
    this.nextDue = nextDueTime(mode, now);
    const handling = this.job.misfire === 'skip' ? 'skipped' : 'caught-up';
    if (handling === 'caught-up') this.owe({ cause: 'misfire', attempt: 1, firedAt: tick });
    this.host.onMisfire(this.job.name, tick, handling);
    return { tick: tick.toISOString(), handling };
  }

  /** The pause before the next run: growing with failures in a row, the restart delay otherwise. */
  private pauseAfter(outcome: RunOutcome): number {
    if (outcome !== 'threw') return this.host.restartDelayMs;
    return retryDelayMs(
      this.failuresInARow,
      this.host.restartDelayMs,
      Math.max(this.host.restartDelayMs, this.host.maxRestartDelayMs),
    );
  }

  private async runOnce(start: RunStart): Promise<RunOutcome> {
    const items = start.items;
    const { job, host } = this;
    if (!host.holding(job.name, items)) {
      // The worker drops the lost items and sets the share again, which wakes this sleep (also
      // when it did so before the sleep began: the wake-up is cleared only at the loop's top).
      await this.sleep(Number.POSITIVE_INFINITY);
      return 'aborted';
    }
    const controller = new AbortController();
    // Set before the record is written: the worker keeps the items until no run of them is left.
    this.current = { controller, items };
    try {
      const recorder = await host.runStarting(job, start);
      const context: JobContext = {
        job: job.name,
        workerId: host.workerId,
        items,
        signal: controller.signal,
        holding: () => {
          if (controller.signal.aborted) return false;
          if (host.holding(job.name, items)) return true;
          controller.abort(new Error('a lease of the share ran out before it could be renewed'));
          return false;
        },
        cause: start.cause,
        attempt: start.attempt,
        log: recorder.log,
        ...(start.firedAt === undefined ? {} : { firedAt: start.firedAt }),
      };
      let outcome: RunOutcome;
      let thrown: unknown;
      const loading = tracingLoading();
      if (loading !== undefined) await loading;
      const span = startJobRunSpan({
        jobs: host.jobs,
        job: job.name,
        workerId: host.workerId,
        items,
        cause: start.cause,
        attempt: start.attempt,
      });
      try {
        // The record took a round trip: the share may have changed, or a lease run out, meanwhile.
        if (!controller.signal.aborted && context.holding()) {
          await (span === undefined ? this.fn(context) : span.run(() => this.fn(context)));
        }
        outcome = controller.signal.aborted ? 'aborted' : 'returned';
      } catch (error) {
        outcome = controller.signal.aborted ? 'aborted' : 'threw';
        thrown = error; // reported with the run's end (job:run), not as a job worker's error
      }
      endJobRunSpan(span, outcome, thrown);
      const endedAt = host.now();
      this.failuresInARow = outcome === 'threw' ? this.failuresInARow + 1 : 0;
      // An aborted run missed nothing of its own: its share changed or went, and the ticks it
      // overran are passed over (the next one due runs with the share as it is then).
      const misfire = this.stopped || outcome === 'aborted' ? undefined : this.misfireAfterRun();
      if (outcome === 'aborted') this.passOverOverrunTicks();
      const retried = outcome === 'threw' && !this.stopped && this.oweRetry(start, endedAt);
      await recorder.ended(
        outcome === 'returned' ? 'succeeded' : outcome === 'threw' ? 'failed' : 'aborted',
        outcome === 'threw' ? thrown : undefined,
        misfire,
        outcome === 'threw' && job.mode !== 'continuous' && !retried,
        endedAt,
      );
      return outcome;
    } finally {
      this.current = undefined;
      host.runEnded(job.name);
    }
  }
}

/** Same items, tokens and params (a job defined again with new shard params changes the share). */
function sameShare(a: readonly JobItem[], b: readonly JobItem[]): boolean {
  return (
    a.length === b.length &&
    a.every(
      (item, index) =>
        item.id === b[index]?.id &&
        item.token === b[index]?.token &&
        JSON.stringify(item.params) === JSON.stringify(b[index]?.params),
    )
  );
}
