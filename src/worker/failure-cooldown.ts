import type { ResolvedBackoff } from '../config/options.js';
import { calcSleepTime } from './backoff.js';

/** How long entries are remembered after their cool-down ended, so the map does not grow with finished tasks. */
const FORGET_AFTER_MS = 10 * 60_000;

interface FailureRecord {
  readonly failures: number;
  readonly until: number;
}

/**
 * A worker's memory of tasks that failed in its hands: it leaves each of them alone for a
 * back-off that grows with its failures, so a task that keeps failing (an unknown function, a
 * malformed node) cannot hold up the tasks after it, while other workers may still take it.
 */
export class FailureCooldown {
  private readonly records = new Map<string, FailureRecord>();

  constructor(
    private readonly backoff: ResolvedBackoff,
    private readonly now: () => number = Date.now,
  ) {}

  recordFailure(task: string): void {
    const now = this.now();
    this.forgetOld(now);
    const failures = (this.records.get(task)?.failures ?? 0) + 1;
    this.records.set(task, { failures, until: now + calcSleepTime(this.backoff, failures - 1) });
  }

  recordSuccess(task: string): void {
    this.records.delete(task);
  }

  /** True while the task is cooling down after a failure here. */
  isCoolingDown(task: string): boolean {
    const record = this.records.get(task);
    return record !== undefined && record.until > this.now();
  }

  /** When the task's cool-down here ends (now when it has none). */
  until(task: string): number {
    return this.records.get(task)?.until ?? this.now();
  }

  private forgetOld(now: number): void {
    for (const [task, record] of this.records)
      if (record.until + FORGET_AFTER_MS < now) this.records.delete(task);
  }
}
