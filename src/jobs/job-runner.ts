/**
 * Runs one job's function on one job worker, with the share of items it holds: `continuous` (one
 * run for as long as the share stays the same, started again when it changes or the run returns),
 * `{ everyMs }` or `{ cron }` (a run at each due time, and at each trigger). One run at a time: a
 * change of share aborts the run in progress, and the next starts only after it has returned, so
 * the worker releases an item only once no run of it is left (`activeItems`).
 */
import { sleepUnless } from '../util/abort-signals.js';
import { cronTimes } from '../schedule/cron-times.js';
import type { JobContext, JobFunction, JobItem } from './job-context.js';
import type { JobMode, StoredJob } from './job-definition.js';

export interface RunnerHost {
  readonly workerId: string;
  /** Wall clock (ms). */
  now(): number;
  /** Whether every lease of `items` is still held right now, by the monotonic clock. */
  holding(job: string, items: readonly JobItem[]): boolean;
  /** A run of `job` ended (its items may now be released). */
  runEnded(job: string): void;
  onError(job: string, error: unknown): void;
  /** After a run that threw or a continuous run that returned on its own, before the next. */
  readonly restartDelayMs: number;
}

type RunOutcome = 'aborted' | 'returned' | 'threw';

export class JobRunner {
  private share: readonly JobItem[] = [];
  private current:
    { readonly controller: AbortController; readonly items: readonly JobItem[] } | undefined;
  private wakeUp = new AbortController();
  private stopped = false;
  private triggers = 0;
  private nextDue: number | undefined;
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
    this.fn = fn;
    this.nextDue = undefined;
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

  private wake(): void {
    this.wakeUp.abort();
  }

  private async sleep(ms: number): Promise<void> {
    if (this.wakeUp.signal.aborted) this.wakeUp = new AbortController();
    await sleepUnless(ms, this.wakeUp.signal);
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      const mode = this.job.mode;
      if (mode === 'continuous') {
        if (this.share.length === 0) {
          await this.sleep(Number.POSITIVE_INFINITY);
          continue;
        }
        const outcome = await this.runOnce(undefined);
        if (outcome !== 'aborted' && !this.stopped) await this.sleep(this.host.restartDelayMs);
        continue;
      }
      const now = this.host.now();
      if (this.triggers > 0) {
        this.triggers = 0;
        if (this.share.length > 0) await this.runOnce(new Date(now));
        continue;
      }
      this.nextDue ??= nextDueTime(mode, now);
      if (this.nextDue === undefined) {
        await this.sleep(Number.POSITIVE_INFINITY); // a cron expression that never fires again
        continue;
      }
      if (this.nextDue > now) {
        await this.sleep(this.nextDue - now);
        continue;
      }
      const due = this.nextDue;
      this.nextDue = nextDueTime(mode, Math.max(due, now)); // times missed meanwhile are passed over
      if (this.share.length > 0) {
        const outcome = await this.runOnce(new Date(due));
        if (outcome === 'threw' && !this.stopped) await this.sleep(this.host.restartDelayMs);
      }
    }
  }

  private async runOnce(firedAt: Date | undefined): Promise<RunOutcome> {
    const items = this.share;
    const { job, host } = this;
    if (!host.holding(job.name, items)) {
      await this.sleep(Number.POSITIVE_INFINITY); // the worker drops the lost items and sets the share again
      return 'aborted';
    }
    const controller = new AbortController();
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
      ...(firedAt === undefined ? {} : { firedAt }),
    };
    this.current = { controller, items };
    try {
      await this.fn(context);
      return controller.signal.aborted ? 'aborted' : 'returned';
    } catch (error) {
      if (controller.signal.aborted) return 'aborted';
      host.onError(job.name, error);
      return 'threw';
    } finally {
      this.current = undefined;
      host.runEnded(job.name);
    }
  }
}

function nextDueTime(mode: Exclude<JobMode, 'continuous'>, after: number): number | undefined {
  if ('everyMs' in mode) return after + mode.everyMs;
  return cronTimes(mode.cron, mode.timezone ?? 'UTC', 'job').next(after);
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
