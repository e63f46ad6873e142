/**
 * The record a running task keeps of one `ctx.spawn` call, `<task>/spawn-<n>` (pure: encoding and
 * checking). It is written twice: first `{ batch, fns }`, before any task of the call exists, naming
 * the addTasks batch that will make them; then `{ batch, fns, tasks }` once that batch is committed.
 * A re-run of the spawning task reads it and gets the same tasks back (src/spawn/task-spawner.ts).
 * Whoever can write a znode can write this one: every field is bounded and checked before use.
 */
import { MalformedNodeError } from '../errors/task-errors.js';
import { decodeValue, encodeValue } from '../serialization/codec.js';
import {
  TASK_PREFIX,
  childPath,
  hasSequentialName,
  isContinuedSerial,
  nameOf,
  parentOf,
} from '../zk/layout.js';

/**
 * The most tasks one `ctx.spawn` call may make: a batch writes them at once, and a record lists
 * them with their functions and paths in one znode (a call is also refused when its record would
 * not fit, under a very long plan path).
 */
export const MAX_SPAWNED_TASKS = 1_000;
/** The most bytes a record may have (paths of MAX_SPAWNED_TASKS tasks fit). */
export const MAX_SPAWN_RECORD_BYTES = 900_000;
const BATCH_ID = /^[A-Za-z0-9_.:-]{1,200}$/;
/** The longest function name a record keeps. */
export const MAX_RECORDED_FN_CHARS = 200;

export interface SpawnRecord {
  /** The addTasks batch that makes the call's tasks (its `batch-<id>` marker commits it). */
  readonly batch: string;
  /** What each task runs (a function's name, or `inline`), in the call's order: a re-run that asks for others is refused. */
  readonly fns: readonly string[];
  /** The tasks' paths, in the call's order, once the batch is committed. */
  readonly tasks?: readonly string[];
  /**
   * Only in a `ctx.continueWith` record: the serial of the input (`dep-<link>`) through which the
   * continuation hands its result back to the task it continues (see CONTINUED_SERIAL).
   */
  readonly link?: number;
}

export function encodeSpawnRecord(record: SpawnRecord, path: string): Buffer {
  return encodeValue(record, 'spawn record', path, MAX_SPAWN_RECORD_BYTES);
}

/** The record stored at `path` (a child of a task of `plan`), checked field by field. */
export function decodeSpawnRecord(path: string, data: Buffer | null | undefined): SpawnRecord {
  if (data === null || data === undefined || data.length === 0)
    throw new MalformedNodeError(path, 'a spawn record without a value');
  if (data.length > MAX_SPAWN_RECORD_BYTES)
    throw new MalformedNodeError(
      path,
      `a spawn record of ${data.length} bytes (at most ${MAX_SPAWN_RECORD_BYTES})`,
    );
  const value = decodeValue(path, data);
  if (typeof value !== 'object' || value === null)
    throw new MalformedNodeError(path, 'a spawn record that is not an object');
  const { batch, fns, tasks, link } = value as Record<string, unknown>;
  if (typeof batch !== 'string' || !BATCH_ID.test(batch))
    throw new MalformedNodeError(path, 'a spawn record whose batch is not a batch id');
  if (!isNameList(fns))
    throw new MalformedNodeError(
      path,
      `a spawn record whose fns are not a list of at most ${MAX_SPAWNED_TASKS} function names`,
    );
  // One below it must be one too: a run that takes the record over uses the next one down.
  if (
    link !== undefined &&
    !(
      typeof link === 'number' &&
      isContinuedSerial(String(link)) &&
      isContinuedSerial(String(link - 1))
    )
  )
    throw new MalformedNodeError(path, 'a spawn record whose link is not a continuation serial');
  const linked = link === undefined ? {} : { link };
  if (tasks === undefined) return { batch, fns, ...linked };
  const plan = parentOf(parentOf(path));
  if (!isTaskList(tasks, plan) || tasks.length !== fns.length)
    throw new MalformedNodeError(
      path,
      `a spawn record whose tasks are not ${fns.length} tasks of plan ${plan}`,
    );
  return { batch, fns, tasks, ...linked };
}

function isNameList(value: unknown): value is string[] {
  return (
    Array.isArray(value) &&
    value.length <= MAX_SPAWNED_TASKS &&
    value.every(
      (fn) => typeof fn === 'string' && fn.length > 0 && fn.length <= MAX_RECORDED_FN_CHARS,
    )
  );
}

/** Paths of tasks of `plan`: `<plan>/task-NNNNNNNNNN`, no other. */
export function isTaskList(value: unknown, plan: string): value is string[] {
  return (
    Array.isArray(value) &&
    value.length <= MAX_SPAWNED_TASKS &&
    value.every(
      (task) =>
        typeof task === 'string' &&
        task === childPath(plan, nameOf(task)) &&
        hasSequentialName(nameOf(task), TASK_PREFIX),
    )
  );
}
