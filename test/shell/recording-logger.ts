import type { LogFields, LogLevel, TaskLogger } from '../../src/logs/task-log-types.js';

/** One call of a RecordingLogger. */
export interface LoggedLine {
  readonly level: LogLevel;
  readonly msg: string;
  readonly fields: LogFields | undefined;
}

/** A `ctx.log` that keeps every call, in order, for a test to look at. */
export class RecordingLogger implements TaskLogger {
  readonly lines: LoggedLine[] = [];

  debug(msg: string, fields?: LogFields): void {
    this.lines.push({ level: 'debug', msg, fields });
  }

  info(msg: string, fields?: LogFields): void {
    this.lines.push({ level: 'info', msg, fields });
  }

  warn(msg: string, fields?: LogFields): void {
    this.lines.push({ level: 'warn', msg, fields });
  }

  error(msg: string, fields?: LogFields): void {
    this.lines.push({ level: 'error', msg, fields });
  }

  /** The lines of one stream of the command's output, in order. */
  stream(name: 'stdout' | 'stderr'): string[] {
    return this.lines.filter((line) => line.fields?.['stream'] === name).map((line) => line.msg);
  }

  /** The process group of the command, from the log's `started` line. */
  startedPid(): number {
    const started = this.lines.find((line) => line.msg.startsWith('started: '));
    const pid = started?.fields?.['pid'];
    if (typeof pid !== 'number')
      throw new Error(`no started line with a pid in ${JSON.stringify(this.lines)}`);
    return pid;
  }
}
