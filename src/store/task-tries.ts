/**
 * The failed tries of a task as its records keep them: a bounded list carried by the task's
 * `attempts` record (rewritten on each failed try, in the same setData as before) and copied into
 * its history record when the task ends. Pure: building the list and checking it when read back.
 *
 * Only tries charged to the task are kept (its function threw, timed out, or its inputs failed):
 * a try its worker gave back uncharged (a pause, a session expiry, a stop) or lost to a crash
 * before the write is not recorded anywhere, and is not listed.
 */
/** The most failed tries a record keeps: the latest ones (each try's `attempt` says which it was). */
export const MAX_KEPT_TRIES = 20;
/** A kept try's error message is cut to this many characters. */
export const MAX_TRY_MESSAGE_CHARS = 300;
/** A kept try's error code and worker id are cut to this many characters. */
export const MAX_TRY_LABEL_CHARS = 200;

/** One failed try of a task, as its records keep it. */
export interface FailedTry {
  /** Which try it was, from 1. */
  readonly attempt: number;
  /** The worker loop that ran it. */
  readonly workerId: string;
  /** When its function started; absent when it failed before (an input that failed, a malformed task). */
  readonly startedAt?: Date;
  /** When its failure was recorded. */
  readonly finishedAt: Date;
  /** Its error's code and message (cut to 300 characters). */
  readonly code: string;
  readonly message: string;
}

/** What a failed try's record (a TaskFailure) says of it. */
interface RecordedFailure {
  readonly attempts: number;
  readonly workerId: string;
  readonly at: Date;
  readonly code: string;
  readonly message: string;
}

/** The try a failure describes, with when its function started (undefined: before it started). */
export function failedTryOf(failure: RecordedFailure, startedAt: Date | undefined): FailedTry {
  return {
    attempt: failure.attempts,
    workerId: clip(failure.workerId, MAX_TRY_LABEL_CHARS),
    ...(startedAt === undefined ? {} : { startedAt }),
    finishedAt: failure.at,
    code: clip(failure.code, MAX_TRY_LABEL_CHARS),
    message: clip(failure.message, MAX_TRY_MESSAGE_CHARS),
  };
}

/**
 * The list with one more try, the oldest dropped beyond MAX_KEPT_TRIES. A try already listed
 * (the same attempt number: a failure written again) replaces it.
 */
export function withFailedTry(previous: readonly FailedTry[], next: FailedTry): FailedTry[] {
  const others = previous.filter((entry) => entry.attempt !== next.attempt);
  return [...others, next].slice(-MAX_KEPT_TRIES);
}

/**
 * A stored list of tries, checked: undefined when it is absent or not a list zk-plan writes (any
 * process that can write the node may have forged it). Only its last MAX_KEPT_TRIES entries are
 * looked at, and every text is cut to its limit before it is kept.
 */
export function parseFailedTries(value: unknown): FailedTry[] | undefined {
  if (!Array.isArray(value)) return undefined;
  const tries: FailedTry[] = [];
  for (const entry of value.slice(-MAX_KEPT_TRIES)) {
    const parsed = parseFailedTry(entry);
    if (parsed === undefined) return undefined;
    tries.push(parsed);
  }
  return tries;
}

function parseFailedTry(value: unknown): FailedTry | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { attempt, workerId, startedAt, finishedAt, code, message } = value as Record<
    string,
    unknown
  >;
  if (!Number.isSafeInteger(attempt) || (attempt as number) < 1) return undefined;
  if (typeof workerId !== 'string' || typeof code !== 'string' || typeof message !== 'string')
    return undefined;
  if (!isDate(finishedAt) || (startedAt !== undefined && !isDate(startedAt))) return undefined;
  return {
    attempt: attempt as number,
    workerId: clip(workerId, MAX_TRY_LABEL_CHARS),
    ...(startedAt === undefined ? {} : { startedAt }),
    finishedAt,
    code: clip(code, MAX_TRY_LABEL_CHARS),
    message: clip(message, MAX_TRY_MESSAGE_CHARS),
  };
}

function isDate(value: unknown): value is Date {
  return value instanceof Date && !Number.isNaN(value.getTime());
}

function clip(text: string, limit: number): string {
  return text.length <= limit ? text : `${text.slice(0, limit)}…`;
}
