import type { LogFields, LogLevel, LogLine } from './task-log-types.js';

/** Longest message kept of one line, in UTF-16 units; the rest is cut and marked. */
export const MAX_MESSAGE_CHARS = 4_000;
/** Largest JSON of a line's fields; bigger fields are replaced by a note saying so. */
export const MAX_FIELDS_BYTES = 1_024;

interface KeptLine {
  readonly line: LogLine;
  /** Its size as stored (JSON, UTF-8). */
  readonly bytes: number;
}

/**
 * The last lines of one attempt's log, in memory, within a byte budget: when a new line does not
 * fit, the oldest lines go and are counted (`droppedLines`, `droppedBytes`), so what is stored
 * says how much is missing. Lines are numbered from the attempt's first (`firstIndex` is the
 * number of the oldest kept), which lets a follower that read up to line n ask for what is new.
 */
export class AttemptTail {
  private readonly kept: KeptLine[] = [];
  private keptBytes = 0;
  private dropped = 0;
  private droppedSize = 0;
  /** Lines appended so far (kept or not). */
  private appended = 0;

  constructor(private budgetBytes: number) {}

  append(level: LogLevel, msg: string, fields?: LogFields, time: Date = new Date()): LogLine {
    const line = boundedLine(level, msg, fields, time);
    const bytes = lineBytes(line);
    this.kept.push({ line, bytes });
    this.keptBytes += bytes;
    this.appended += 1;
    this.shrinkTo(this.budgetBytes);
    return line;
  }

  /** Lowers the budget (a plan's log cap reached) and drops the oldest lines beyond it. */
  limitTo(budgetBytes: number): void {
    this.budgetBytes = Math.min(this.budgetBytes, budgetBytes);
    this.shrinkTo(this.budgetBytes);
  }

  get lines(): readonly LogLine[] {
    return this.kept.map(({ line }) => line);
  }

  get bytes(): number {
    return this.keptBytes;
  }

  get droppedLines(): number {
    return this.dropped;
  }

  get droppedBytes(): number {
    return this.droppedSize;
  }

  /** Number (from 0) of the oldest kept line. */
  get firstIndex(): number {
    return this.appended - this.kept.length;
  }

  get appendedLines(): number {
    return this.appended;
  }

  private shrinkTo(budget: number): void {
    while (this.keptBytes > budget && this.kept.length > 0) {
      const oldest = this.kept.shift() as KeptLine;
      this.keptBytes -= oldest.bytes;
      this.dropped += 1;
      this.droppedSize += oldest.bytes;
    }
  }
}

/** The size a line takes in the stored record (its JSON, UTF-8, and a separator). */
export function lineBytes(line: LogLine): number {
  return Buffer.byteLength(JSON.stringify({ ...line, time: line.time.getTime() })) + 1;
}

/** A line with its message and fields cut to their bounds: a task that logs a 10 MB string keeps a bounded line. */
function boundedLine(
  level: LogLevel,
  msg: string,
  fields: LogFields | undefined,
  time: Date,
): LogLine {
  const text = typeof msg === 'string' ? msg : String(msg);
  const message =
    text.length > MAX_MESSAGE_CHARS
      ? `${text.slice(0, MAX_MESSAGE_CHARS)}… (${text.length - MAX_MESSAGE_CHARS} more characters cut)`
      : text;
  const kept = boundedFields(fields);
  return kept === undefined
    ? { time, level, msg: message }
    : { time, level, msg: message, fields: kept };
}

function boundedFields(fields: LogFields | undefined): LogFields | undefined {
  if (fields === undefined || fields === null || typeof fields !== 'object') return undefined;
  let json: string | undefined;
  try {
    json = JSON.stringify(fields);
  } catch (error) {
    return { fieldsDropped: `not JSON: ${error instanceof Error ? error.message : String(error)}` };
  }
  if (json === undefined) return undefined;
  const bytes = Buffer.byteLength(json);
  if (bytes > MAX_FIELDS_BYTES)
    return { fieldsDropped: `${bytes} bytes of fields (over ${MAX_FIELDS_BYTES})` };
  return JSON.parse(json) as LogFields; // a copy: the task may change its object after logging it
}
