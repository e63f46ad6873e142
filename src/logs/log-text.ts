/**
 * A task's log as text: one header per try and one line per log line, as `zk-plan logs` prints it
 * and the web view's download gives it. The caller makes the text safe for where it goes (a
 * terminal: `printable`; a download: plain text).
 */
import type { TaskLogAttempt } from './attempt-log-record.js';
import type { LogLine } from './task-log-types.js';

export function tryHeader(record: TaskLogAttempt): string {
  const ended = record.finishedAt
    ? `, ended ${record.finishedAt.toISOString()}`
    : ', still running';
  const where = record.fullLog
    ? `; all of it on ${record.fullLog.host} in ${record.fullLog.location}`
    : '';
  const capped = record.planCapReached ? '; the plan reached its log cap' : '';
  const cut = record.truncated
    ? ` (${record.droppedLines} earlier line(s), ${record.droppedBytes} bytes, not kept here${capped}${where})`
    : '';
  return `── attempt ${record.attempt} on ${record.workerId}, started ${record.startedAt.toISOString()}${ended}${cut}`;
}

export function logLineText(line: LogLine): string {
  const fields = line.fields === undefined ? '' : ` ${JSON.stringify(line.fields)}`;
  return `${line.time.toISOString()} ${line.level.toUpperCase().padEnd(5)} ${line.msg}${fields}`;
}

/** Every try's header and lines, one text. */
export function taskLogText(tries: readonly TaskLogAttempt[]): string {
  return (
    tries.flatMap((record) => [tryHeader(record), ...record.lines.map(logLineText)]).join('\n') +
    (tries.length > 0 ? '\n' : '')
  );
}
