/**
 * The execution log of a fault-harness run: what the harness's worker processes append, one JSON
 * line per event, and how the harness reads it back.
 *
 * Each process appends with O_APPEND, one write per line, so lines of several processes never mix;
 * a process killed with SIGKILL may leave its last line torn, which the reader skips. A line is
 * one of:
 * - `start`: an execution of a task began (`run` names it: `<pid>:<n>`), with the task, its plan,
 *   the function, `ctx.attempt`, the worker, and a hash of its params and inputs;
 * - `effect`: the function declared a side effect (`recordEffect`), with a hash of its value;
 * - `end`: the function returned (`returned`, with a hash of the result) or threw (`threw`, with the
 *   error's name), and whether its signal had aborted by then (the worker had lost the task).
 * An execution without `end` was cut short: its process was killed, or stopped before it finished.
 *
 * Values are compared by hash of their canonical serialised form (superjson, object keys sorted),
 * so a Map, a Date or a BigInt compares by value, and two objects with the same entries in another
 * order compare equal.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import superjson from 'superjson';
import { printable } from '../../util/printable.js';

/** The environment variable naming the execution log a harness worker appends to. */
export const HARNESS_LOG_ENV = 'ZK_PLAN_HARNESS_LOG';
/** The environment variable naming the user's functions module a harness worker wraps. */
export const HARNESS_FUNCTIONS_ENV = 'ZK_PLAN_HARNESS_FUNCTIONS';

/** The longest preview of a value a record keeps. */
export const PREVIEW_CHARS = 120;
/** The longest line the reader accepts: a longer one is not from the harness and is skipped. */
const MAX_LINE_CHARS = 16 * 1024;

/** An execution of a task began. */
export interface StartRecord {
  readonly kind: 'start';
  /** Names this execution: `<pid>:<n>`. */
  readonly run: string;
  readonly at: number;
  readonly plan: string;
  readonly task: string;
  readonly fn: string;
  /** `ctx.attempt`: 1, then n after n − 1 failures that counted against the task. */
  readonly attempt: number;
  readonly pid: number;
  readonly workerId: string;
  /** Hash of the task's params and inputs. */
  readonly inputsHash: string;
}

/** A side effect the function declared with `recordEffect`. */
export interface EffectRecord {
  readonly kind: 'effect';
  readonly run: string;
  readonly at: number;
  readonly name: string;
  readonly valueHash: string;
  readonly preview: string;
}

/** The function returned or threw. */
export interface EndRecord {
  readonly kind: 'end';
  readonly run: string;
  readonly at: number;
  readonly outcome: 'returned' | 'threw';
  /** The task's signal had aborted when the function ended: the worker had lost the task, so the ending does not count. */
  readonly aborted: boolean;
  /** With `returned`. */
  readonly resultHash?: string;
  /** With `returned`: the start of the result's serialised form. */
  readonly preview?: string;
  /** With `threw`: the error's name and the start of its message. */
  readonly error?: string;
}

/** One line of the execution log. */
export type ExecutionRecord = StartRecord | EffectRecord | EndRecord;

/** Canonical JSON of `value`'s superjson form: object keys sorted, so that key order does not matter. */
export function canonicalForm(value: unknown): string {
  return JSON.stringify(sortKeys(superjson.serialize(value)));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (typeof value !== 'object' || value === null) return value;
  const entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return Object.fromEntries(entries.map(([key, item]) => [key, sortKeys(item)]));
}

/** A short hash of `value`'s canonical form: equal values, equal hashes. */
export function valueHash(value: unknown): string {
  return createHash('sha256').update(canonicalForm(value)).digest('hex').slice(0, 16);
}

/** The start of `value`'s JSON form (`undefined` for undefined), one printable line. */
export function previewOf(value: unknown): string {
  let text: string;
  try {
    text = JSON.stringify(superjson.serialize(value).json) ?? 'undefined';
  } catch {
    text = String(value);
  }
  const line = printable(text, { multiline: false });
  return line.length > PREVIEW_CHARS ? `${line.slice(0, PREVIEW_CHARS - 1)}…` : line;
}

/** The records of a log's text in order. A torn line (a process killed mid-write) or a line of another shape is skipped. */
export function parseExecutionRecords(text: string): ExecutionRecord[] {
  const records: ExecutionRecord[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '' || line.length > MAX_LINE_CHARS) continue;
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      continue; // a partial line: only possible for the last write of a killed process
    }
    if (isExecutionRecord(parsed)) records.push(parsed);
  }
  return records;
}

/** The log file's records in file order (none when it does not exist yet). */
export function readExecutionRecords(logFile: string): ExecutionRecord[] {
  return existsSync(logFile) ? parseExecutionRecords(readFileSync(logFile, 'utf8')) : [];
}

function isExecutionRecord(value: unknown): value is ExecutionRecord {
  if (typeof value !== 'object' || value === null) return false;
  const record = value as Record<string, unknown>;
  if (typeof record['run'] !== 'string' || typeof record['at'] !== 'number') return false;
  switch (record['kind']) {
    case 'start':
      return (
        ['plan', 'task', 'fn', 'workerId', 'inputsHash'].every(
          (field) => typeof record[field] === 'string',
        ) &&
        typeof record['attempt'] === 'number' &&
        typeof record['pid'] === 'number'
      );
    case 'effect':
      return ['name', 'valueHash', 'preview'].every((field) => typeof record[field] === 'string');
    case 'end':
      return (
        (record['outcome'] === 'returned' || record['outcome'] === 'threw') &&
        typeof record['aborted'] === 'boolean'
      );
    default:
      return false;
  }
}
