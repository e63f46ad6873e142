/**
 * Output helpers shared by the commands: what they print (every line through `print`, `printError`
 * or `printJson`, which make it safe for a terminal), aligned tables, short names, durations.
 */
import { escapeJsonControls, printable } from '../util/printable.js';

/** JSON.stringify with what superjson values may hold made printable (BigInt, Map, Set, RegExp, NaN and ±Infinity as text, not null). */
export function toJson(value: unknown): string {
  return JSON.stringify(
    value,
    (_key, entry: unknown) => {
      if (typeof entry === 'bigint') return entry.toString();
      if (typeof entry === 'number' && !Number.isFinite(entry)) return String(entry);
      if (entry instanceof Map)
        return Object.fromEntries([...entry].map(([key, item]) => [String(key), item]));
      if (entry instanceof Set) return [...entry];
      if (entry instanceof RegExp) return entry.toString();
      if (entry instanceof Error)
        return {
          name: entry.name,
          message: entry.message,
          ...('code' in entry ? { code: entry.code } : {}),
        };
      return entry;
    },
    2,
  );
}

/**
 * Prints one JSON document on stdout (indented), with DEL and the C1 controls escaped as well
 * (src/util/printable.ts: JSON.stringify leaves them raw); a JSON reader gets the same value.
 */
export function printJson(value: unknown): void {
  process.stdout.write(`${escapeJsonControls(toJson(value))}\n`);
}

/** Prints one JSON document on one line of stdout (a long-running command's start line), escaped as printJson does. */
export function printJsonLine(value: unknown): void {
  process.stdout.write(`${escapeJsonControls(JSON.stringify(value))}\n`);
}

/**
 * Prints text on stdout, and a line end. The one way the commands print text: values in it come
 * from ZooKeeper (failure messages, reasons, worker and job ids…), where whoever may write could
 * put terminal escape sequences, so every control character and escape sequence is removed
 * (src/util/printable.ts). Line feeds and tabs stay: commands lay out several lines on purpose
 * (a header and a table, a job and its workers), and the values inside a table are made one line
 * by formatTable.
 */
export function print(text: string): void {
  process.stdout.write(`${printable(text)}\n`);
}

/** As `print`, on stderr. */
export function printError(text: string): void {
  process.stderr.write(`${printable(text)}\n`);
}

export interface Column<Row> {
  readonly header: string;
  readonly value: (row: Row) => string;
  /** Right-align (numbers). */
  readonly right?: boolean;
}

/**
 * An aligned table, two spaces between columns. With `width` (a terminal's), the last column is
 * cut to fit, ending in `…`.
 */
export function formatTable<Row>(
  rows: readonly Row[],
  columns: readonly Column<Row>[],
  width?: number,
): string {
  const cells = rows.map((row) => columns.map((column) => oneLine(column.value(row))));
  const widths = columns.map((column, index) =>
    Math.max(column.header.length, ...cells.map((row) => (row[index] ?? '').length)),
  );
  const lines = [columns.map((column) => column.header), ...cells].map((row) =>
    row
      .map((cell, index) => {
        if (index === row.length - 1 && !columns[index]?.right) return cell;
        const pad = widths[index] ?? 0;
        return columns[index]?.right ? cell.padStart(pad) : cell.padEnd(pad);
      })
      .join('  ')
      .trimEnd(),
  );
  return lines
    .map((line) => (width !== undefined && width > 20 ? truncate(line, width) : line))
    .join('\n');
}

/** Cuts `text` to `width` characters, ending in `…` when cut. */
export function truncate(text: string, width: number): string {
  return text.length <= width ? text : `${text.slice(0, Math.max(0, width - 1))}…`;
}

/** The terminal's width when stdout is one, for tables cut to fit. */
export function terminalWidth(): number | undefined {
  return process.stdout.isTTY ? process.stdout.columns : undefined;
}

/** A table cell: control characters removed, line breaks shown as ` ⏎ `, tabs as spaces. */
function oneLine(text: string): string {
  return printable(text, { multiline: false });
}

/** `/plans/plan-0000000003/task-0000000012` → `task-12`; `/plans/plan-0000000003` → `plan-3`. */
export function shortName(path: string): string {
  const name = path.slice(path.lastIndexOf('/') + 1);
  const match = /^([a-z]+-)(\d+)$/.exec(name);
  return match ? `${match[1]}${Number(match[2])}` : name;
}

/** Replaces the full paths of nodes of `plan` in a message by their short names. */
export function shortenPaths(text: string, plan: string): string {
  const prefix = `${plan}/`;
  return text.replace(
    new RegExp(`${escapeRegExp(prefix)}([a-z]+-\\d+)(/[\\w-]+)*`, 'g'),
    (_whole, name: string) => shortName(name),
  );
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** 1234 → `1.2s`; 65000 → `1m05s`; 300 → `300ms`. */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return '?';
  if (ms < 1000) return `${Math.round(ms)}ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)}s`;
  const totalSeconds = Math.round(ms / 1000);
  const hours = Math.floor(totalSeconds / 3600);
  const minutes = Math.floor((totalSeconds % 3600) / 60);
  const seconds = totalSeconds % 60;
  return hours > 0
    ? `${hours}h${String(minutes).padStart(2, '0')}m`
    : `${minutes}m${String(seconds).padStart(2, '0')}s`;
}

/** A local wall-clock time, `HH:MM:SS`. */
export function formatTime(date: Date): string {
  return date.toTimeString().slice(0, 8);
}

/** `fn(param, …)` with each param shortened, for a task's CALL column. */
export function formatCall(fn: string, params: readonly unknown[], width = 40): string {
  const shown = params.map((param) => {
    let text: string;
    try {
      text =
        typeof param === 'string'
          ? JSON.stringify(param)
          : (toJson(param)?.replace(/\s+/g, ' ') ?? 'undefined');
    } catch {
      text = '…';
    }
    return truncate(text, 16);
  });
  return truncate(`${fn}(${shown.join(', ')})`, width);
}
