/**
 * What ZooKeeper keeps of one attempt's log (`<plan>/logs/task-N/try-…`), and its encoding. The
 * record is read by any process (`logs.read`, `logs.follow`, `zk-plan logs`, the web view), and anyone
 * who can write a znode can write one: decoding checks the size before parsing and every field's
 * type and bound after, and answers MalformedNodeError naming the node otherwise.
 */
import { MalformedNodeError } from '../errors/task-errors.js';
import { LOG_LEVELS, type LogFields, type LogLevel, type LogLine } from './task-log-types.js';

/** Largest attempt record read back; `maxBytesPerAttempt` is bounded well below it. */
export const MAX_RECORD_BYTES = 512 * 1024;

/**
 * One attempt's log as kept in ZooKeeper: its last lines, and how many earlier ones were dropped.
 *
 * @category Logs
 */
export interface TaskLogAttempt {
  /** 1 for the first try, n for the try after n − 1 charged failures (a try given back uncharged keeps its number). */
  readonly attempt: number;
  readonly workerId: string;
  readonly startedAt: Date;
  /** Set by the last flush, when the try ended (completed, failed, aborted or given back). */
  readonly finishedAt?: Date;
  /** True when older lines were dropped to stay within the bounds (`droppedLines` of them, `droppedBytes` in all). */
  readonly truncated: boolean;
  readonly droppedLines: number;
  readonly droppedBytes: number;
  /** Number (from 0 for the attempt's first line) of `lines[0]`. */
  readonly firstIndex: number;
  /** True when the plan's log budget (`maxBytesPerPlan`) ran out and the tail was cut shorter than `maxBytesPerAttempt`. */
  readonly planCapReached: boolean;
  /** Where the worker's sink keeps the whole log (a file path on that worker's host), when it keeps one. */
  readonly fullLog?: { readonly host: string; readonly location: string; readonly url?: string };
  readonly lines: readonly LogLine[];
}

interface StoredLine {
  t: number;
  l: LogLevel;
  m: string;
  f?: LogFields;
}

interface StoredRecord {
  v: 1;
  attempt: number;
  workerId: string;
  startedAt: number;
  finishedAt?: number;
  droppedLines: number;
  droppedBytes: number;
  firstIndex: number;
  planCapReached?: true;
  fullLog?: { host: string; location: string; url?: string };
  lines: StoredLine[];
}

export function encodeAttemptLog(record: TaskLogAttempt): Buffer {
  const stored: StoredRecord = {
    v: 1,
    attempt: record.attempt,
    workerId: record.workerId,
    startedAt: record.startedAt.getTime(),
    ...(record.finishedAt ? { finishedAt: record.finishedAt.getTime() } : {}),
    droppedLines: record.droppedLines,
    droppedBytes: record.droppedBytes,
    firstIndex: record.firstIndex,
    ...(record.planCapReached ? { planCapReached: true as const } : {}),
    ...(record.fullLog ? { fullLog: record.fullLog } : {}),
    lines: record.lines.map((line) => ({
      t: line.time.getTime(),
      l: line.level,
      m: line.msg,
      ...(line.fields ? { f: line.fields } : {}),
    })),
  };
  return Buffer.from(JSON.stringify(stored));
}

export function decodeAttemptLog(path: string, data: Buffer | null): TaskLogAttempt {
  if (data === null || data.length === 0)
    throw new MalformedNodeError(path, 'an attempt log record is empty');
  if (data.length > MAX_RECORD_BYTES)
    throw new MalformedNodeError(
      path,
      `an attempt log record of ${data.length} bytes is over the ${MAX_RECORD_BYTES} bytes one can be`,
    );
  let parsed: unknown;
  try {
    parsed = JSON.parse(data.toString('utf8'));
  } catch (error) {
    throw new MalformedNodeError(path, 'an attempt log record is not JSON', error);
  }
  const bad = (problem: string): never => {
    throw new MalformedNodeError(path, `an attempt log record ${problem}`);
  };
  if (typeof parsed !== 'object' || parsed === null || (parsed as { v?: unknown }).v !== 1)
    return bad('is not a version 1 record');
  const stored = parsed as Partial<Record<keyof StoredRecord, unknown>>;
  const count = (name: string, value: unknown): number =>
    typeof value === 'number' && Number.isSafeInteger(value) && value >= 0
      ? value
      : bad(`has no valid ${name}`);
  const time = (name: string, value: unknown): Date => new Date(count(name, value));
  const attempt = count('attempt', stored.attempt);
  if (attempt < 1) bad('has an attempt below 1');
  if (typeof stored.workerId !== 'string' || stored.workerId.length > 1_000)
    bad('has no valid workerId');
  if (!Array.isArray(stored.lines)) bad('has no lines');
  const lines = (stored.lines as unknown[]).map((line, index) => decodeLine(line, index, bad));
  const fullLog = stored.fullLog === undefined ? undefined : decodeFullLog(stored.fullLog, bad);
  const droppedLines = count('droppedLines', stored.droppedLines);
  return {
    attempt,
    workerId: stored.workerId as string,
    startedAt: time('startedAt', stored.startedAt),
    ...(stored.finishedAt === undefined
      ? {}
      : { finishedAt: time('finishedAt', stored.finishedAt) }),
    truncated: droppedLines > 0 || stored.planCapReached === true,
    droppedLines,
    droppedBytes: count('droppedBytes', stored.droppedBytes),
    firstIndex: count('firstIndex', stored.firstIndex),
    planCapReached: stored.planCapReached === true,
    ...(fullLog ? { fullLog } : {}),
    lines,
  };
}

function decodeLine(value: unknown, index: number, bad: (problem: string) => never): LogLine {
  if (typeof value !== 'object' || value === null)
    return bad(`has a line ${index} that is not an object`);
  const line = value as Partial<Record<keyof StoredLine, unknown>>;
  if (typeof line.t !== 'number' || !Number.isFinite(line.t))
    bad(`has a line ${index} without a time`);
  if (!LOG_LEVELS.includes(line.l as LogLevel)) bad(`has a line ${index} with an unknown level`);
  if (typeof line.m !== 'string') bad(`has a line ${index} without a message`);
  if (
    line.f !== undefined &&
    (typeof line.f !== 'object' || line.f === null || Array.isArray(line.f))
  )
    bad(`has a line ${index} whose fields are not an object`);
  const base = {
    time: new Date(line.t as number),
    level: line.l as LogLevel,
    msg: line.m as string,
  };
  return line.f === undefined ? base : { ...base, fields: line.f as LogFields };
}

function decodeFullLog(
  value: unknown,
  bad: (problem: string) => never,
): { host: string; location: string; url?: string } {
  const fullLog = value as { host?: unknown; location?: unknown; url?: unknown };
  if (
    typeof fullLog !== 'object' ||
    fullLog === null ||
    typeof fullLog.host !== 'string' ||
    typeof fullLog.location !== 'string'
  ) {
    return bad('has a fullLog that is not { host, location, url? }');
  }
  if (fullLog.host.length > 1_000 || fullLog.location.length > 4_000)
    return bad('has a fullLog over its bounds');
  if (fullLog.url === undefined) return { host: fullLog.host, location: fullLog.location };
  // A reader fetches this URL (zk-plan logs --full) or links it (the web view): an http(s) URL only, bounded.
  if (
    typeof fullLog.url !== 'string' ||
    fullLog.url.length > 4_000 ||
    !/^https?:\/\//.test(fullLog.url)
  )
    return bad('has a fullLog url that is not an http(s) URL');
  return { host: fullLog.host, location: fullLog.location, url: fullLog.url };
}
