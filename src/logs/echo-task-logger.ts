import { printable } from '../util/printable.js';
import type { LogFields, LogLevel, TaskLogger } from './task-log-types.js';

/**
 * `ctx.log` until a task's log is stored with it: each line goes to the worker's stderr, one line,
 * labelled with the task and the worker, made printable (a line may come from a command's output).
 */
export function echoTaskLogger(task: string, workerId: string, write: (line: string) => void = (line) => process.stderr.write(`${line}\n`)): TaskLogger {
  const line = (level: LogLevel, msg: string, fields?: LogFields): void => {
    const extra = fields === undefined || Object.keys(fields).length === 0 ? '' : ` ${safeJson(fields)}`;
    write(printable(`[${task} on ${workerId}] ${level}: ${msg}${extra}`, { multiline: false }));
  };
  return {
    debug: (msg, fields) => line('debug', msg, fields),
    info: (msg, fields) => line('info', msg, fields),
    warn: (msg, fields) => line('warn', msg, fields),
    error: (msg, fields) => line('error', msg, fields),
  };
}

function safeJson(fields: LogFields): string {
  try {
    return JSON.stringify(fields) ?? '';
  } catch {
    return '(fields that are not JSON)';
  }
}
