/**
 * What a plan keeps of a task once the task's node is gone: `<plan>/history/task-N`, in every plan
 * created with history (the default; `createPlan(parent, { history: false })` keeps none). Pure:
 * the records, their encoding within one znode, and their check when read back.
 *
 * - The worker that completes a task writes its `done` record before it deletes the task's
 *   `ready` (src/store/task-store.ts): a task whose deletion has begun always has its record.
 * - control.cancel writes a record for every task it is about to delete (src/plan/cancel-history.ts):
 *   `cancelled` (it was running, or ready to run), `unstarted` (it waited for inputs that never
 *   came, or was still being written), or `failed` (it had failed for good), all before it deletes
 *   any task, so a cancel cut short and called again finds the records of what it deleted.
 *
 * A record is created once, never rewritten: the first writer of a task's record wins (a worker
 * finishing the task while a cancel records it may be recorded either way), and a write sent again
 * after a lost reply, or by a second process doing the same, finds it there.
 */
import { decodeValue, encodeValue, MAX_VALUE_BYTES } from '../serialization/codec.js';
import { parseTaskFailure, type TaskFailure } from './failure-policy.js';
import type { FailedInput } from '../trigger/failed-inputs.js';
import type { TaskDefinition } from '../exec/task-spec.js';
import { parseFailedTries, type FailedTry } from './task-tries.js';

/** The most bytes a record may take: what one znode holds. A longer one is kept without its params and outputs. */
export const MAX_HISTORY_RECORD_BYTES = MAX_VALUE_BYTES;

/** Text fields of a record kept without its params and outputs are cut to this many characters. */
const MAX_LEAN_TEXT = 1_000;

/** What every record holds. */
interface RecordBase {
  /** Its registered function, or `inline`. */
  readonly fn: string;
  /** Its bound params; absent when they did not fit in the record (`omitted`). */
  readonly params?: readonly unknown[];
  /** The dep-* nodes of dependents it fed or was to feed (their tasks are its outputs; the serial orders each dependent's inputs). */
  readonly outputs: readonly string[];
  readonly keepResult: boolean;
  /** The key it was added under, when its definition names one (a spec's keys are in `<plan>/spec`). */
  readonly key?: string;
  /** Failed tries before the one that succeeded (done), before it was cancelled, or in all (failed). */
  readonly failedTries: number;
  /**
   * The latest of those failed tries (at most MAX_KEPT_TRIES, oldest first), copied from the
   * task's `attempts` record when it ended; absent when none is recorded.
   */
  readonly tries?: readonly FailedTry[];
  /** The record was too large for one znode: its params and outputs were left out, its texts cut. */
  readonly omitted?: true;
}

/** It ran to the end and its result was handed on. */
export interface DoneRecord extends RecordBase {
  readonly state: 'done';
  /** When its last try started; absent when the worker that ran it died after storing the result and another one handed it on. */
  readonly startedAt?: Date;
  readonly finishedAt: Date;
  /** The worker loop that ran it (absent as `startedAt`). */
  readonly workerId?: string;
  /** The task it handed over to with ctx.continueWith, whose result became its own. */
  readonly continuedBy?: string;
  /** Why it was skipped (its function returned `skip(reason)`, or its trigger rule skipped it): it completed without a result. */
  readonly skipped?: string;
  /** Its inputs that came as failures (a trigger rule that takes them), and the tasks whose links carried them. */
  readonly failedInputs?: readonly FailedInput[];
}

/** It had failed for good when its plan was cancelled (the cancel deleted its node). */
export interface FailedRecord extends RecordBase {
  readonly state: 'failed';
  readonly failure: TaskFailure;
}

/** Its plan was cancelled while it ran or was ready to run. */
export interface CancelledRecord extends RecordBase {
  readonly state: 'cancelled';
  /** Where it stood: running (a worker held it), finishing (its result stored, not handed on), runnable or retrying. */
  readonly was: 'running' | 'finishing' | 'runnable' | 'retrying';
  readonly cancelledAt: Date;
  /** The worker loop that held it, and since when (was running). */
  readonly workerId?: string;
  readonly startedAt?: Date;
}

/** Its plan was cancelled before it could start: it waited for inputs, could never get them, or was still being written. */
export interface UnstartedRecord extends RecordBase {
  readonly state: 'unstarted';
  readonly was: 'waiting' | 'blocked' | 'building';
  readonly cancelledAt: Date;
}

/** The record a plan keeps of a task whose node is gone. */
export type TaskHistoryRecord = DoneRecord | FailedRecord | CancelledRecord | UnstartedRecord;

const CANCELLED_WAS: readonly CancelledRecord['was'][] = [
  'running',
  'finishing',
  'runnable',
  'retrying',
];
const UNSTARTED_WAS: readonly UnstartedRecord['was'][] = ['waiting', 'blocked', 'building'];

/** What a history record keeps of a task's definition: its function, params, whether its result is kept, and its key. */
export function recordedDefinition(definition: TaskDefinition): {
  fn: string;
  params: readonly unknown[];
  keepResult: boolean;
  key?: string;
} {
  return {
    fn: 'fn' in definition ? definition.fn : 'inline',
    params: 'fn' in definition ? definition.params : [],
    keepResult: definition.keepResult === true,
    ...('key' in definition && typeof definition.key === 'string' ? { key: definition.key } : {}),
  };
}

/**
 * The record as stored in one znode. One over MAX_HISTORY_RECORD_BYTES (params near the znode
 * limit, or a producer of thousands of dependents) is kept lean: without params and outputs, its
 * texts cut, marked `omitted`.
 */
export function encodeHistoryRecord(record: TaskHistoryRecord, path: string): Buffer {
  const full = encodeValue(record, 'task history', path, Number.POSITIVE_INFINITY);
  if (full.length <= MAX_HISTORY_RECORD_BYTES) return full;
  return encodeValue(leanRecord(record), 'task history', path);
}

function leanRecord(record: TaskHistoryRecord): TaskHistoryRecord {
  const { params: _params, ...rest } = record;
  const lean = {
    ...rest,
    fn: clip(record.fn),
    outputs: [],
    omitted: true as const,
    ...(record.key !== undefined ? { key: clip(record.key) } : {}),
  };
  if (lean.state === 'done' && lean.skipped !== undefined)
    return { ...lean, skipped: clip(lean.skipped) };
  if (lean.state !== 'failed') return lean;
  const { failure } = lean;
  return {
    ...lean,
    failure: {
      ...failure,
      stack: undefined,
      type: clip(failure.type),
      message: clip(failure.message),
      code: clip(failure.code),
    },
  };
}

function clip(text: string): string {
  return text.length <= MAX_LEAN_TEXT ? text : `${text.slice(0, MAX_LEAN_TEXT)}…`;
}

/**
 * A stored record, checked: undefined for anything zk-plan does not write (another tool's node, a
 * forged one). The size is checked before the value is decoded; every field is checked for its type.
 */
export function parseHistoryRecord(
  path: string,
  data: Buffer | null,
): TaskHistoryRecord | undefined {
  if (data === null || data.length === 0 || data.length > MAX_HISTORY_RECORD_BYTES)
    return undefined;
  let value: unknown;
  try {
    value = decodeValue(path, data);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const stored = value as Record<string, unknown>;
  const base = baseOf(stored);
  if (base === undefined) return undefined;
  switch (stored['state']) {
    case 'done': {
      const finishedAt = dateOf(stored['finishedAt']);
      const startedAt = dateOf(stored['startedAt']);
      const { workerId, continuedBy, skipped } = stored;
      const failedInputs = parseFailedInputs(stored['failedInputs']);
      if (
        finishedAt === undefined ||
        !optionalString(workerId) ||
        !optionalString(continuedBy) ||
        !optionalString(skipped)
      )
        return undefined;
      return {
        ...base,
        state: 'done',
        finishedAt,
        ...(startedAt !== undefined ? { startedAt } : {}),
        ...(typeof workerId === 'string' ? { workerId } : {}),
        ...(typeof continuedBy === 'string' ? { continuedBy } : {}),
        ...(typeof skipped === 'string' ? { skipped: clip(skipped) } : {}),
        ...(failedInputs === undefined ? {} : { failedInputs }),
      };
    }
    case 'failed': {
      const failure = parseTaskFailure(stored['failure']);
      return failure === undefined ? undefined : { ...base, state: 'failed', failure };
    }
    case 'cancelled': {
      const cancelledAt = dateOf(stored['cancelledAt']);
      const was = CANCELLED_WAS.find((candidate) => candidate === stored['was']);
      const startedAt = dateOf(stored['startedAt']);
      if (cancelledAt === undefined || was === undefined || !optionalString(stored['workerId']))
        return undefined;
      return {
        ...base,
        state: 'cancelled',
        was,
        cancelledAt,
        ...(typeof stored['workerId'] === 'string' ? { workerId: stored['workerId'] } : {}),
        ...(startedAt !== undefined ? { startedAt } : {}),
      };
    }
    case 'unstarted': {
      const cancelledAt = dateOf(stored['cancelledAt']);
      const was = UNSTARTED_WAS.find((candidate) => candidate === stored['was']);
      if (cancelledAt === undefined || was === undefined) return undefined;
      return { ...base, state: 'unstarted', was, cancelledAt };
    }
    default:
      return undefined;
  }
}

function baseOf(stored: Record<string, unknown>): RecordBase | undefined {
  const { fn, params, outputs, keepResult, key, failedTries } = stored;
  // A list that is not one zk-plan writes is left out; the record still holds.
  const tries = parseFailedTries(stored['tries']);
  if (
    typeof fn !== 'string' ||
    !Array.isArray(outputs) ||
    !outputs.every((output) => typeof output === 'string')
  )
    return undefined;
  if (params !== undefined && !Array.isArray(params)) return undefined;
  if (!optionalString(key)) return undefined;
  if (
    failedTries !== undefined &&
    !(Number.isSafeInteger(failedTries) && (failedTries as number) >= 0)
  )
    return undefined;
  return {
    fn,
    ...(params !== undefined ? { params: params as unknown[] } : {}),
    outputs: outputs as string[],
    keepResult: keepResult === true,
    ...(typeof key === 'string' ? { key } : {}),
    failedTries: (failedTries as number | undefined) ?? 0,
    ...(tries === undefined || tries.length === 0 ? {} : { tries }),
    ...(stored['omitted'] === true ? { omitted: true as const } : {}),
  };
}

/** A record's failed inputs, each `{ dep, producer }` of text; undefined when absent or not that shape. */
function parseFailedInputs(value: unknown): FailedInput[] | undefined {
  if (!Array.isArray(value)) return undefined;
  const inputs = value.flatMap((input: unknown) => {
    if (typeof input !== 'object' || input === null) return [];
    const { dep, producer } = input as Record<string, unknown>;
    return typeof dep === 'string' && typeof producer === 'string' ? [{ dep, producer }] : [];
  });
  return inputs.length === value.length ? inputs : undefined;
}

function dateOf(value: unknown): Date | undefined {
  return value instanceof Date && !Number.isNaN(value.getTime()) ? value : undefined;
}

function optionalString(value: unknown): boolean {
  return value === undefined || typeof value === 'string';
}
