/**
 * A task's tries as `plans.describe` shows them (TaskView.tries): the failed tries its records
 * keep (src/store/task-tries.ts), then its last try as its state tells it (done or skipped,
 * running, cancelled while running). Pure.
 */
import type { FailedTry } from '../store/task-tries.js';

/**
 * How a try ended: `failed` (charged to the task; another may follow), `done` or `skipped` (the
 * try that completed it), `running` (not ended yet), `cancelled` (its plan was cancelled while it ran).
 *
 * @category Plan status
 */
export type TaskTryOutcome = 'failed' | 'done' | 'skipped' | 'running' | 'cancelled';

/**
 * One try of a task: which it was, who ran it, when, and how it ended.
 *
 * @category Plan status
 */
export interface TaskTry {
  /** Which try it was, from 1. */
  readonly attempt: number;
  readonly outcome: TaskTryOutcome;
  /** The worker loop that ran it, when known (a task handed on by another worker than the one that ran it has none). */
  readonly workerId?: string;
  /** When its function started (a running try: when its worker claimed it), when known. */
  readonly startedAt?: Date;
  /** When it ended; absent while it runs. */
  readonly finishedAt?: Date;
  /** A failed try's error code and message (at most 300 characters). */
  readonly error?: { readonly code: string; readonly message: string };
}

/** The last try of a task, as its state tells it; undefined when none ran to an end or runs. */
export interface LastTry {
  readonly outcome: Exclude<TaskTryOutcome, 'failed'>;
  readonly workerId?: string;
  readonly startedAt?: Date;
  readonly finishedAt?: Date;
}

/**
 * The tries to show: the kept failed ones, oldest first, and the last one after them, numbered
 * after every failed try (`failedTries` counts those the list may have dropped). Undefined when
 * there is none.
 */
export function taskTries(
  failed: readonly FailedTry[],
  failedTries: number,
  last: LastTry | undefined,
): TaskTry[] | undefined {
  const tries: TaskTry[] = failed.map((entry) => ({
    attempt: entry.attempt,
    outcome: 'failed',
    workerId: entry.workerId,
    ...(entry.startedAt === undefined ? {} : { startedAt: entry.startedAt }),
    finishedAt: entry.finishedAt,
    error: { code: entry.code, message: entry.message },
  }));
  if (last !== undefined) {
    const lastListed = tries.at(-1)?.attempt ?? 0;
    tries.push({
      attempt: Math.max(failedTries, lastListed) + 1,
      outcome: last.outcome,
      ...(last.workerId === undefined ? {} : { workerId: last.workerId }),
      ...(last.startedAt === undefined ? {} : { startedAt: last.startedAt }),
      ...(last.finishedAt === undefined ? {} : { finishedAt: last.finishedAt }),
    });
  }
  return tries.length === 0 ? undefined : tries;
}

/** The failed tries of a view's list, as a record keeps them (control.cancel copies them into the task's record). */
export function failedTriesOf(tries: readonly TaskTry[] | undefined): FailedTry[] {
  return (tries ?? []).flatMap((entry) =>
    entry.outcome === 'failed' && entry.workerId !== undefined && entry.finishedAt !== undefined
      ? [
          {
            attempt: entry.attempt,
            workerId: entry.workerId,
            ...(entry.startedAt === undefined ? {} : { startedAt: entry.startedAt }),
            finishedAt: entry.finishedAt,
            code: entry.error?.code ?? '',
            message: entry.error?.message ?? '',
          },
        ]
      : [],
  );
}
