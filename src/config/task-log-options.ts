import { InvalidArgumentError } from '../errors/usage-errors.js';
import type { LogSink } from '../logs/log-sink.js';
import { MAX_RECORD_BYTES } from '../logs/attempt-log-record.js';
import { RECORD_OVERHEAD_BYTES } from '../logs/try-log.js';
import { MAX_TIMER_MS } from '../util/abort-signals.js';
import { DEFAULTS } from './defaults.js';

/**
 * What a worker keeps of its tasks' logs (`WorkerOptions.taskLogs`).
 *
 * @category Logs
 */
export interface TaskLogOptions {
  /** Send what a task function writes with `console.*` while it runs to its log (still shown on the worker's output). @defaultValue DEFAULTS.taskLogs.captureConsole (true) */
  readonly captureConsole?: boolean;
  /** Show each task log line on the worker's own output, labelled `[plan key #attempt]`. @defaultValue DEFAULTS.taskLogs.echo (true) */
  readonly echo?: boolean;
  /**
   * Bytes of each try's last lines kept in ZooKeeper (older lines are dropped and counted). ZooKeeper
   * holds its whole tree in memory: a plan of n tasks that all log costs up to n × this. @defaultValue DEFAULTS.taskLogs.maxBytesPerAttempt (8 KiB)
   */
  readonly maxBytesPerAttempt?: number;
  /** Bytes of log tails one plan may keep in ZooKeeper in all; past it, tries keep less (or none), their sink keeps all. @defaultValue DEFAULTS.taskLogs.maxBytesPerPlan (2 MiB) */
  readonly maxBytesPerPlan?: number;
  /** The longest a logged line waits before it is written to ZooKeeper: what a worker killed with `kill -9` can lose. @defaultValue DEFAULTS.taskLogs.flushIntervalMs (500) */
  readonly flushIntervalMs?: number;
  /** Where the whole log goes: a FileLogSink under `<tmpdir>/zk-plan-logs` unless another sink is given; `false` keeps no whole log. @defaultValue a FileLogSink */
  readonly sink?: LogSink | false;
}

export interface ResolvedTaskLogOptions {
  readonly captureConsole: boolean;
  readonly echo: boolean;
  readonly maxBytesPerAttempt: number;
  readonly maxBytesPerPlan: number;
  readonly flushIntervalMs: number;
  /** undefined: the default file sink; false: none. */
  readonly sink: LogSink | false | undefined;
}

const TASK_LOG_KEYS: Record<keyof TaskLogOptions, true> = {
  captureConsole: true,
  echo: true,
  maxBytesPerAttempt: true,
  maxBytesPerPlan: true,
  flushIntervalMs: true,
  sink: true,
};

/** Validates `taskLogs` and fills in the defaults; `false` keeps no log in ZooKeeper (ctx.log still shows on the worker's output). */
export function resolveTaskLogOptions(
  options: TaskLogOptions | false | undefined,
): ResolvedTaskLogOptions | false {
  if (options === false) return false;
  const given = options ?? {};
  if (typeof given !== 'object' || given === null)
    throw new InvalidArgumentError('taskLogs', 'expected an object of task log options, or false');
  for (const key of Object.keys(given)) {
    if (!(key in TASK_LOG_KEYS))
      throw new InvalidArgumentError(
        `taskLogs.${key}`,
        `not a task log option (known: ${Object.keys(TASK_LOG_KEYS).join(', ')})`,
      );
  }
  const defaults = DEFAULTS.taskLogs;
  const resolved = {
    captureConsole: given.captureConsole ?? defaults.captureConsole,
    echo: given.echo ?? defaults.echo,
    maxBytesPerAttempt: given.maxBytesPerAttempt ?? defaults.maxBytesPerAttempt,
    maxBytesPerPlan: given.maxBytesPerPlan ?? defaults.maxBytesPerPlan,
    flushIntervalMs: given.flushIntervalMs ?? defaults.flushIntervalMs,
    sink: given.sink,
  };
  for (const name of ['captureConsole', 'echo'] as const) {
    if (typeof resolved[name] !== 'boolean')
      throw new InvalidArgumentError(
        `taskLogs.${name}`,
        `expected a boolean, got ${typeof resolved[name]}`,
      );
  }
  assertBytes(
    'taskLogs.maxBytesPerAttempt',
    resolved.maxBytesPerAttempt,
    RECORD_OVERHEAD_BYTES * 2,
    MAX_RECORD_BYTES / 2,
  );
  assertBytes(
    'taskLogs.maxBytesPerPlan',
    resolved.maxBytesPerPlan,
    resolved.maxBytesPerAttempt,
    Number.MAX_SAFE_INTEGER,
  );
  const interval = resolved.flushIntervalMs;
  if (
    typeof interval !== 'number' ||
    !Number.isInteger(interval) ||
    interval < 1 ||
    interval > MAX_TIMER_MS
  ) {
    throw new InvalidArgumentError(
      'taskLogs.flushIntervalMs',
      `expected a whole number of ms from 1 to ${MAX_TIMER_MS}, got ${String(interval)}`,
    );
  }
  const sink = resolved.sink;
  if (
    sink !== undefined &&
    sink !== false &&
    (typeof sink !== 'object' || sink === null || typeof sink.open !== 'function')
  ) {
    throw new InvalidArgumentError(
      'taskLogs.sink',
      'expected a LogSink (an object with open(identity)), or false',
    );
  }
  return resolved;
}

function assertBytes(name: string, value: unknown, min: number, max: number): void {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min || value > max) {
    throw new InvalidArgumentError(
      name,
      `expected a whole number of bytes from ${min} to ${max}, got ${String(value)}`,
    );
  }
}
