/**
 * The shapes of a task's log: what a task function writes through `ctx.log` (or `console.*`
 * while it runs), and what is kept of each attempt in ZooKeeper for `logs.read`, `logs.follow`,
 * `zk-plan logs` and the web view.
 *
 * @category Logs
 */

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

export const LOG_LEVELS: readonly LogLevel[] = ['debug', 'info', 'warn', 'error'];

/**
 * Extra structured values of a log line; kept as JSON (bounded, like the message).
 *
 * @category Logs
 */
export type LogFields = Readonly<Record<string, unknown>>;

/**
 * One line of a task's log.
 *
 * @category Logs
 */
export interface LogLine {
  readonly time: Date;
  readonly level: LogLevel;
  readonly msg: string;
  readonly fields?: LogFields;
}

/**
 * `ctx.log` of a task function: each line goes to the task's log (and is echoed to the worker's output).
 *
 * @category Logs
 */
export interface TaskLogger {
  /** A line at debug level, with optional structured fields. */
  debug(msg: string, fields?: LogFields): void;
  /** A line at info level, with optional structured fields. */
  info(msg: string, fields?: LogFields): void;
  /** A line at warn level, with optional structured fields. */
  warn(msg: string, fields?: LogFields): void;
  /** A line at error level, with optional structured fields. */
  error(msg: string, fields?: LogFields): void;
}

/** A logger that keeps nothing: ctx.log of a function run outside a worker's task logs (a test calling it directly). */
export const SILENT_LOGGER: TaskLogger = {
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
};
