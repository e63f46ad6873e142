/** The record a plan keeps of a finished task (`<plan>/history/task-N`) when created with `{ history: true }`. */
export interface TaskHistoryRecord {
  readonly state: 'done';
  readonly fn: string;
  readonly params: readonly unknown[];
  /** The dep-* nodes of dependents it fed (their tasks are its outputs; the serial orders each dependent's inputs). */
  readonly outputs: readonly string[];
  readonly keepResult: boolean;
  readonly startedAt: Date;
  readonly finishedAt: Date;
  readonly workerId: string;
  /** Failed tries before the one that succeeded. */
  readonly failedTries: number;
}
