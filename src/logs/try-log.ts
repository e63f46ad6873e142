/**
 * The log of one try of a task, while it runs: lines from `ctx.log` and captured `console.*` go
 * to a bounded tail in memory (AttemptTail), to the worker's sink (the whole log) and, labelled,
 * to the worker's own output. The tail is written to ZooKeeper at most `flushIntervalMs` after a
 * line arrives, so a worker killed with `kill -9` loses at most that much, and once more by
 * `finish`, which the worker awaits before it records the try's completion or failure: a log read
 * right after `waitForCompletion` is whole. A try that logs nothing writes nothing.
 */
import { ZkError } from '../errors/zk-error.js';
import { AttemptTail } from './attempt-tail.js';
import type { TaskLogAttempt } from './attempt-log-record.js';
import type { ConsoleTarget } from './console-capture.js';
import type { TryIdentity, TrySink } from './log-sink.js';
import type { TaskLogStore } from './task-log-store.js';
import type { LogFields, LogLevel, LogLine, TaskLogger } from './task-log-types.js';

/** Bytes of a record besides its lines (attempt, worker id, times, counts, full log location), reserved with them. */
export const RECORD_OVERHEAD_BYTES = 512;
/** Writes of a try's last lines tried before its outcome is recorded anyway (a session that expires under the write, a reconnection). */
export const FINAL_WRITE_TRIES = 5;
/** Pause before the next try of a failed write, times the number of tries so far. */
export const WRITE_RETRY_MS = 100;

/** A try takes the plan's log budget in steps of this many bytes, so that a plan's quiet tries leave room for its chatty ones. */
export const RESERVE_STEP_BYTES = 2_048;

export interface TryLogSettings {
  readonly maxBytesPerAttempt: number;
  readonly maxBytesPerPlan: number;
  readonly flushIntervalMs: number;
}

export interface TryLogParts {
  readonly identity: TryIdentity;
  readonly store: TaskLogStore;
  readonly settings: TryLogSettings;
  readonly sink?: TrySink;
  readonly host: string;
  /** Shows a line on the worker's own output (undefined: not echoed). */
  readonly echo?: (line: LogLine) => void;
  /** Told of a write that failed (ZooKeeper unreachable…): the task runs on, the lines are written at the next flush. */
  readonly onError: (error: unknown) => void;
}

export class TryLog implements ConsoleTarget {
  readonly logger: TaskLogger;
  private readonly tail: AttemptTail;
  private readonly startedAt = new Date();
  private finishedAt: Date | undefined;
  private reserved = 0;
  private planCapReached = false;
  private created = false;
  private dirty = false;
  private stopped = false;
  private timer: NodeJS.Timeout | undefined;
  private writes: Promise<void> = Promise.resolve();
  private lastWriteFailedOnConnection = false;

  constructor(private readonly parts: TryLogParts) {
    this.tail = new AttemptTail(parts.settings.maxBytesPerAttempt - RECORD_OVERHEAD_BYTES);
    const at =
      (level: LogLevel) =>
      (msg: string, fields?: LogFields): void =>
        this.add(level, msg, fields);
    this.logger = { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
  }

  consoleLine(level: LogLevel, text: string): void {
    this.add(level, text);
  }

  /** Ends the try's log: the last lines are written (awaited), and the sink closed. Never throws. */
  async finish(): Promise<void> {
    if (this.finishedAt !== undefined) return await this.writes;
    this.finishedAt = new Date();
    clearTimeout(this.timer);
    this.timer = undefined;
    // Any line at all means a last write, with finishedAt; it is chained behind a write in flight, so
    // it is awaited even when that one took every line already.
    if (this.tail.appendedLines > 0) {
      this.dirty = true;
      // The last lines matter most (a reader right after completion must see them): a write that
      // failed on the connection (a session expiring under it) is sent again, on the next session.
      for (let tries = 1; ; tries++) {
        await this.flush();
        if (
          !this.dirty ||
          this.stopped ||
          tries >= FINAL_WRITE_TRIES ||
          !this.lastWriteFailedOnConnection
        )
          break;
        await new Promise((resolve) => setTimeout(resolve, WRITE_RETRY_MS * tries));
      }
    }
    await this.parts.sink?.close().catch((error: unknown) => this.parts.onError(error));
  }

  private add(level: LogLevel, msg: string, fields?: LogFields): void {
    const line = this.tail.append(level, typeof msg === 'string' ? msg : String(msg), fields);
    this.parts.echo?.(line);
    if (this.finishedAt !== undefined) return; // a stray callback of a task that has returned: shown, not kept
    this.parts.sink?.write(line);
    this.dirty = true;
    this.scheduleFlush();
  }

  private scheduleFlush(): void {
    if (this.timer !== undefined || this.stopped) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.flush();
    }, this.parts.settings.flushIntervalMs);
    this.timer.unref();
  }

  /** Writes are chained: one at a time, each with the tail as it is when its turn comes. */
  private flush(): Promise<void> {
    this.writes = this.writes.then(() => this.writeTail());
    return this.writes;
  }

  private async writeTail(): Promise<void> {
    if (!this.dirty || this.stopped) return;
    this.dirty = false;
    try {
      await this.reserveFor(this.tail.bytes + RECORD_OVERHEAD_BYTES);
      if (this.reserved === 0) {
        this.stopped = true; // the plan's budget is spent: this try keeps no tail in ZooKeeper (the sink still has it all)
        return;
      }
      const { identity, store } = this.parts;
      const written = await store.write(
        identity.task,
        identity.tryName,
        this.record(),
        this.created,
      );
      if (written === 'plan-gone') {
        this.stopped = true; // the plan was deleted under its running task: nothing to keep
        return;
      }
      this.created = true;
    } catch (error) {
      this.dirty = true; // kept for the next flush (or finish)
      this.lastWriteFailedOnConnection = error instanceof ZkError && error.isConnectionProblem;
      this.parts.onError(error);
      if (this.finishedAt === undefined) this.scheduleFlush(); // no new line may come to carry these
      return;
    }
    this.lastWriteFailedOnConnection = false;
  }

  /** Makes the try's share of the plan's budget cover `bytes`, cutting the tail to what it got when the budget ran out. */
  private async reserveFor(bytes: number): Promise<void> {
    const { maxBytesPerAttempt, maxBytesPerPlan } = this.parts.settings;
    const wanted = Math.min(bytes, maxBytesPerAttempt);
    if (wanted <= this.reserved) return;
    const step = Math.min(
      Math.ceil((wanted - this.reserved) / RESERVE_STEP_BYTES) * RESERVE_STEP_BYTES,
      maxBytesPerAttempt - this.reserved,
    );
    this.reserved += await this.parts.store.reserve(
      this.parts.identity.plan,
      step,
      maxBytesPerPlan,
    );
    if (this.reserved < wanted) {
      this.planCapReached = true;
      this.tail.limitTo(Math.max(0, this.reserved - RECORD_OVERHEAD_BYTES));
    }
  }

  private record(): TaskLogAttempt {
    const { identity, sink, host } = this.parts;
    return {
      attempt: identity.attempt,
      workerId: identity.workerId,
      startedAt: this.startedAt,
      ...(this.finishedAt ? { finishedAt: this.finishedAt } : {}),
      truncated: this.tail.droppedLines > 0 || this.planCapReached,
      droppedLines: this.tail.droppedLines,
      droppedBytes: this.tail.droppedBytes,
      firstIndex: this.tail.firstIndex,
      planCapReached: this.planCapReached,
      ...(sink
        ? {
            fullLog: {
              host,
              location: sink.location,
              ...(sink.url === undefined ? {} : { url: sink.url }),
            },
          }
        : {}),
      lines: this.tail.lines,
    };
  }
}
