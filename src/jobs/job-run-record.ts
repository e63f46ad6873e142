/**
 * A job's run history (pure): what a record of one run holds, how its node is named, how a record
 * read back is checked, and the state a reader derives from it. A worker writes a record when a run
 * starts and again when it ends; a record that never ended belongs to a run that is still going, or
 * whose worker died (or was cut off) in the middle of it: `interrupted`.
 */
import { MalformedNodeError } from '../errors/task-errors.js';
import { JOB_RUN_PREFIX } from '../zk/layout.js';

/**
 * Why a run started: its `tick` (everyMs or cron), a `trigger` (`jobs.trigger`), the catch-up run
 * of a tick that came while the previous run still ran (`misfire`), the new holder's run of an
 * interrupted run's items (`failover`), a `retry` of a run that threw, or a `continuous` job's run.
 *
 * @category Jobs
 */
export type JobRunCause = 'tick' | 'trigger' | 'misfire' | 'failover' | 'retry' | 'continuous';

/**
 * How a run ended: it returned (`succeeded`), threw (`failed`), or was stopped by the worker
 * (`aborted`: its share changed, a lease was lost or ran out, the worker stopped).
 *
 * @category Jobs
 */
export type JobRunOutcome = 'succeeded' | 'failed' | 'aborted';

/**
 * A run as its history shows it: `running` while its worker lives and it has not ended,
 * `interrupted` when its worker is gone without ending it, else its outcome.
 *
 * @category Jobs
 */
export type JobRunState = 'running' | 'interrupted' | JobRunOutcome;

/**
 * One item of a run: its id and the fencing token the worker held it with.
 *
 * @category Jobs
 */
export interface JobRunItem {
  readonly id: string;
  readonly token: number;
}

/**
 * What a failed run's error was, as recorded (bounded: a long message is cut).
 *
 * @category Jobs
 */
export interface JobRunError {
  readonly type: string;
  readonly message: string;
  readonly code?: string;
}

/**
 * A run's record, as written into its node: at the start without `finishedAt` and `outcome`,
 * then again with them.
 *
 * @category Jobs
 */
export interface JobRunRecord {
  readonly job: string;
  readonly worker: string;
  readonly items: readonly JobRunItem[];
  readonly cause: JobRunCause;
  /** Tries of the same due run so far, this one included (1 unless it is a retry). */
  readonly attempt: number;
  /** The time the run was due (ticks, triggers and their catch-up, retries and failovers). */
  readonly firedAt?: string;
  readonly startedAt: string;
  readonly finishedAt?: string;
  readonly outcome?: JobRunOutcome;
  readonly error?: JobRunError;
  /** A failover run: the run (node name) it runs again. */
  readonly failoverOf?: string;
  /** A tick came while this run ran (the latest, if several): run once after it (`caught-up`) or dropped (`skipped`). */
  readonly misfire?: JobRunMisfire;
  /** The last lines the function wrote with `ctx.log` (at most MAX_RUN_LOG_LINES, MAX_RUN_LOG_BYTES in all), kept with its end. */
  readonly log?: readonly JobRunLogLine[];
}

/**
 * A line of a run's log as its record keeps it (the message cut at MAX_RUN_LOG_LINE_CHARS).
 *
 * @category Jobs
 */
export interface JobRunLogLine {
  readonly at: string;
  readonly level: 'debug' | 'info' | 'warn' | 'error';
  readonly msg: string;
}

/** The most `ctx.log` lines a run's record keeps: the last ones. */
export const MAX_RUN_LOG_LINES = 20;
/** The longest message a kept log line has (a longer one is cut). */
export const MAX_RUN_LOG_LINE_CHARS = 300;
/** The most bytes of log lines a record keeps, however short they are: a record stays small. */
export const MAX_RUN_LOG_BYTES = 4_000;

/**
 * The tick a run overran, and what became of it.
 *
 * @category Jobs
 */
export interface JobRunMisfire {
  readonly tick: string;
  readonly handling: 'caught-up' | 'skipped';
}

/**
 * A run as `jobs.runs(name)` gives it: its record, the name of its node, and its state.
 *
 * @category Jobs
 */
export interface JobRun extends JobRunRecord {
  readonly run: string;
  readonly state: JobRunState;
}

/** The longest error message a record keeps (a longer one is cut, so a record stays small). */
export const MAX_RUN_ERROR_CHARS = 500;
/** The most items a record lists (a job's pool has at most 10 000, so a share may too). */
const MAX_RUN_ITEMS = 10_000;
const RUN_NAME = /^run-(\d{13})-(.+)-(\d{1,10})$/;
const CAUSES: ReadonlySet<string> = new Set([
  'tick',
  'trigger',
  'misfire',
  'failover',
  'retry',
  'continuous',
]);
const OUTCOMES: ReadonlySet<string> = new Set(['succeeded', 'failed', 'aborted']);
const LEVELS: ReadonlySet<string> = new Set(['debug', 'info', 'warn', 'error']);

/**
 * The lines a record keeps of a run's log: each message cut at MAX_RUN_LOG_LINE_CHARS, then the
 * newest lines that fit MAX_RUN_LOG_LINES and MAX_RUN_LOG_BYTES, oldest first.
 */
export function keptLogLines(lines: readonly JobRunLogLine[]): JobRunLogLine[] {
  const kept: JobRunLogLine[] = [];
  let bytes = 0;
  for (let index = lines.length - 1; index >= 0 && kept.length < MAX_RUN_LOG_LINES; index--) {
    const line = lines[index] as JobRunLogLine;
    const msg =
      line.msg.length > MAX_RUN_LOG_LINE_CHARS
        ? `${line.msg.slice(0, MAX_RUN_LOG_LINE_CHARS)}…`
        : line.msg;
    bytes += Buffer.byteLength(msg) + line.at.length + line.level.length;
    if (bytes > MAX_RUN_LOG_BYTES) break;
    kept.push({ ...line, msg });
  }
  return kept.reverse();
}

/**
 * The node name of a run: its start time first (ms, 13 digits, so names sort by start), then the
 * worker and the worker's count of runs it started, which make it unique. A name decided before the
 * create is safe to send again: a resend after a lost reply finds the node there.
 */
export function runNodeName(startedAt: number, worker: string, count: number): string {
  return `${JOB_RUN_PREFIX}${String(Math.max(0, Math.floor(startedAt))).padStart(13, '0')}-${worker}-${count}`;
}

/** The worker a run's node name names; undefined for a name zk-plan does not write. */
export function runWorkerOf(name: string): string | undefined {
  return RUN_NAME.exec(name)?.[2];
}

/** The start time (ms) a run's node name carries; undefined for a name zk-plan does not write. */
export function runStartOf(name: string): number | undefined {
  const digits = RUN_NAME.exec(name)?.[1];
  return digits === undefined ? undefined : Number(digits);
}

/** Whether `name` is a run node's name. */
export function isRunNodeName(name: string): boolean {
  return RUN_NAME.test(name);
}

/** Run node names, oldest first (by start time, then by name). */
export function sortRuns(names: readonly string[]): string[] {
  return names.filter(isRunNodeName).sort();
}

/** The names beyond the newest `keep`, oldest first: those a prune deletes. */
export function runsBeyond(names: readonly string[], keep: number): string[] {
  const sorted = sortRuns(names);
  return sorted.slice(0, Math.max(0, sorted.length - keep));
}

/** The state of a run, given whether its worker is live now. */
export function runState(record: JobRunRecord, workerLive: boolean): JobRunState {
  if (record.outcome !== undefined) return record.outcome;
  return workerLive ? 'running' : 'interrupted';
}

/** A thrown value as a record keeps it: its class, its message (cut), its code if it has one. */
export function runError(error: unknown): JobRunError {
  const type =
    error instanceof Error
      ? error.constructor.name || error.name
      : typeof error === 'object' && error !== null
        ? 'Object'
        : typeof error;
  const raw = error instanceof Error ? error.message : String(error);
  const message = raw.length > MAX_RUN_ERROR_CHARS ? `${raw.slice(0, MAX_RUN_ERROR_CHARS)}…` : raw;
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.length <= 100
    ? { type, message, code }
    : { type, message };
}

/** A record read back from `path`: checked in full, since anything may have written the node. */
export function parseRunRecord(path: string, value: unknown): JobRunRecord {
  const problem = runRecordProblem(value);
  if (problem !== undefined)
    throw new MalformedNodeError(
      path,
      `not a job run record (${problem}): delete it, it is only history`,
    );
  return value as JobRunRecord;
}

function runRecordProblem(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'not an object';
  const record = value as Record<string, unknown>;
  if (typeof record.job !== 'string' || typeof record.worker !== 'string')
    return 'no job or worker';
  if (!Array.isArray(record.items) || record.items.length > MAX_RUN_ITEMS) return 'bad items';
  for (const item of record.items as unknown[]) {
    const entry = item as Partial<JobRunItem> | null;
    if (typeof entry?.id !== 'string' || !Number.isSafeInteger(entry.token)) return 'bad item';
  }
  if (typeof record.cause !== 'string' || !CAUSES.has(record.cause)) return 'bad cause';
  if (!Number.isSafeInteger(record.attempt) || (record.attempt as number) < 1) return 'bad attempt';
  if (typeof record.startedAt !== 'string') return 'no startedAt';
  for (const field of ['firedAt', 'finishedAt', 'failoverOf'])
    if (record[field] !== undefined && typeof record[field] !== 'string') return `bad ${field}`;
  if (record.outcome !== undefined && !OUTCOMES.has(record.outcome as string)) return 'bad outcome';
  if (record.misfire !== undefined) {
    const misfire = record.misfire as Partial<JobRunMisfire> | null;
    if (
      typeof misfire?.tick !== 'string' ||
      (misfire.handling !== 'caught-up' && misfire.handling !== 'skipped')
    )
      return 'bad misfire';
  }
  if (record.log !== undefined) {
    if (!Array.isArray(record.log) || record.log.length > MAX_RUN_LOG_LINES) return 'bad log';
    for (const line of record.log as unknown[]) {
      const entry = line as Partial<JobRunLogLine> | null;
      if (
        typeof entry?.at !== 'string' ||
        typeof entry.msg !== 'string' ||
        entry.msg.length > MAX_RUN_LOG_LINE_CHARS + 1 ||
        !LEVELS.has(entry.level as string)
      )
        return 'bad log line';
    }
  }
  if (record.error !== undefined) {
    const error = record.error as Partial<JobRunError> | null;
    if (typeof error?.type !== 'string' || typeof error.message !== 'string') return 'bad error';
  }
  return undefined;
}
