/**
 * Concurrency limits per key (src/limits/concurrency-limits.ts): the limit node's value, the
 * slot names and which slot a worker tries. Pure.
 *
 * `<parent>/zk-plan-limits/<key>` holds `{ limit }`; a running task with that key holds one of the
 * ephemeral children `slot-0` … `slot-<limit − 1>`. The names are bounded by the limit, so no more
 * than `limit` slots can exist however many workers race. Lowering the limit lets the slots above
 * it run out: they are not taken again, and nothing new starts until fewer than `limit` are held.
 */
import { InvalidArgumentError } from '../errors/usage-errors.js';
import { decodeValue, encodeValue } from '../serialization/codec.js';

export const SLOT_PREFIX = 'slot-';
/** The longest key accepted (it is a znode name, URI-encoded). */
const MAX_KEY_LENGTH = 200;
/** The highest limit accepted: each slot is a znode, each waiting process a watch. */
export const MAX_LIMIT = 10_000;

/**
 * A slot of a concurrency limit held by a running task: which task, which worker loop, since when (`getConcurrencyLimit`, `listConcurrencyLimits`).
 *
 * @category Limits
 */
export interface SlotRecord {
  readonly task: string;
  readonly workerId: string;
  readonly at: Date;
  /** Tells this run's slot from any other of the same name, of the same session too. */
  readonly lease?: string;
}

export function assertConcurrencyKey(argument: string, key: unknown): asserts key is string {
  if (typeof key !== 'string' || key === '' || key.length > MAX_KEY_LENGTH) {
    throw new InvalidArgumentError(
      argument,
      `expected a non-empty string of at most ${MAX_KEY_LENGTH} characters, got ${typeof key === 'string' ? JSON.stringify(key) : typeof key}`,
    );
  }
}

export function assertLimit(argument: string, limit: unknown): asserts limit is number {
  if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 0 || limit > MAX_LIMIT) {
    throw new InvalidArgumentError(
      argument,
      `expected a whole number from 0 (nothing with the key runs) to ${MAX_LIMIT}, got ${String(limit)}`,
    );
  }
}

/** The znode name of a key. */
export function keyNodeName(key: string): string {
  return encodeURIComponent(key);
}

/** The key a limit node's name stands for; undefined for a name keyNodeName cannot have made. */
export function keyOfNodeName(name: string): string | undefined {
  try {
    const key = decodeURIComponent(name);
    return keyNodeName(key) === name ? key : undefined;
  } catch {
    return undefined; // a malformed escape: not a node of ours
  }
}

export function encodeLimit(limit: number, path: string): Buffer {
  return encodeValue({ limit }, 'concurrency limit', path);
}

/** The limit a limit node holds; undefined when it holds none zk-plan can read (the key is then unlimited). */
export function parseLimit(path: string, data: Buffer | null): number | undefined {
  try {
    const value = data?.length
      ? (decodeValue(path, data) as { limit?: unknown } | null)
      : undefined;
    const limit = value?.limit;
    return typeof limit === 'number' && Number.isInteger(limit) && limit >= 0
      ? Math.min(limit, MAX_LIMIT)
      : undefined;
  } catch {
    return undefined;
  }
}

export function slotName(index: number): string {
  return `${SLOT_PREFIX}${index}`;
}

/** The index a slot's name stands for; undefined for a child that is not a slot. */
export function slotIndex(name: string): number | undefined {
  if (!name.startsWith(SLOT_PREFIX)) return undefined;
  const digits = name.slice(SLOT_PREFIX.length);
  return /^(0|[1-9]\d{0,8})$/.test(digits) ? Number(digits) : undefined;
}

/** How many slots are held, whatever their index (a slot above a lowered limit still runs a task). */
export function heldSlots(children: readonly string[]): number {
  return children.filter((name) => slotIndex(name) !== undefined).length;
}

/** Whether a slot at or above `limit` is held: the limit was lowered while those tasks ran. */
export function holdsAboveLimit(children: readonly string[], limit: number): boolean {
  return children.some((name) => (slotIndex(name) ?? -1) >= limit);
}

/**
 * The slot indices below `limit` that no child holds, in an order starting at `start` (spreads
 * racing workers over the free slots); none while `limit` or more slots are held, counting those
 * above a lowered limit: lowering a limit takes effect as running tasks end, and nothing new starts
 * while the count is at or over it.
 */
export function freeSlots(children: readonly string[], limit: number, start: number): number[] {
  if (heldSlots(children) >= limit) return [];
  const taken = new Set(children);
  const free: number[] = [];
  for (let offset = 0; offset < limit; offset++) {
    const index = (start + offset) % limit;
    if (!taken.has(slotName(index))) free.push(index);
  }
  return free;
}

/** A slot and the zxid of its creation (which orders the slots across every session). */
export interface SlotCreation {
  readonly name: string;
  readonly czxid: number;
}

/**
 * After taking `mine` beside slots above a lowered limit: whether it may run. Two workers that each
 * saw one place left under the limit can both take a slot below it, so the slots are ranked by
 * creation and only the first `limit` run; each worker reads the slots after its own create, so it
 * sees every slot created before it and both come to the same answer.
 */
export function keepsSlot(
  mine: SlotCreation,
  slots: readonly SlotCreation[],
  limit: number,
): boolean {
  const earlier = slots.filter(
    (slot) =>
      slot.name !== mine.name && slotIndex(slot.name) !== undefined && slot.czxid < mine.czxid,
  );
  return earlier.length < limit;
}

export function encodeSlot(record: SlotRecord, path: string): Buffer {
  return encodeValue(record, 'concurrency slot', path);
}

/** A slot's holder; undefined when the slot holds nothing zk-plan wrote. */
export function decodeSlot(path: string, data: Buffer | null): SlotRecord | undefined {
  try {
    const value = data?.length
      ? (decodeValue(path, data) as Partial<SlotRecord> | null)
      : undefined;
    return typeof value?.task === 'string' &&
      typeof value.workerId === 'string' &&
      value.at instanceof Date
      ? { task: value.task, workerId: value.workerId, at: value.at }
      : undefined;
  } catch {
    return undefined;
  }
}
