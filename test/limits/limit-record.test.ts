/**
 * The pure part of concurrency limits (src/limits/limit-record.ts): which keys and limits are
 * accepted, the limit node's value, slot names, and which slots a worker may take or keep.
 * Worker pools that use them over the in-memory ZooKeeper: concurrency-limits.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { ValueTooLargeError } from '../../src/errors/task-errors.js';
import { InvalidArgumentError } from '../../src/errors/usage-errors.js';
import {
  MAX_LIMIT,
  assertConcurrencyKey,
  assertLimit,
  decodeSlot,
  encodeLimit,
  encodeSlot,
  freeSlots,
  heldSlots,
  holdsAboveLimit,
  keepsSlot,
  keyNodeName,
  keyOfNodeName,
  parseLimit,
  slotIndex,
  slotName,
} from '../../src/limits/limit-record.js';
import { encodeValue } from '../../src/serialization/codec.js';
import { expectThrows } from '../support/expect-error.js';

describe('keys and limits', () => {
  it('accepts a key of 1 to 200 characters, and refuses any other, naming the argument and what it got', () => {
    expect(() => assertConcurrencyKey('key', 'k')).not.toThrow();
    expect(() => assertConcurrencyKey('key', 'k'.repeat(200))).not.toThrow();
    const empty = expectThrows(
      () => assertConcurrencyKey('concurrencyKey', ''),
      InvalidArgumentError,
    );
    expect(empty.argument).toBe('concurrencyKey');
    expect(empty.message).toBe(
      'Invalid concurrencyKey: expected a non-empty string of at most 200 characters, got ""',
    );
    const long = 'k'.repeat(201);
    expect(
      expectThrows(() => assertConcurrencyKey('key', long), InvalidArgumentError).message,
    ).toContain(`got "${long}"`);
    expect(
      expectThrows(() => assertConcurrencyKey('key', 7), InvalidArgumentError).message,
    ).toMatch(/, got number$/);
  });

  it('accepts a whole limit from 0 to MAX_LIMIT, and refuses any other, saying what it got', () => {
    for (const limit of [0, 1, MAX_LIMIT]) expect(() => assertLimit('limit', limit)).not.toThrow();
    for (const limit of [-1, MAX_LIMIT + 1, 1.5, Number.NaN, '3', undefined]) {
      const error = expectThrows(() => assertLimit('limit', limit), InvalidArgumentError);
      expect(error.argument).toBe('limit');
      expect(error.message).toBe(
        `Invalid limit: expected a whole number from 0 (nothing with the key runs) to ${MAX_LIMIT}, got ${String(limit)}`,
      );
    }
  });

  it("names a key's node so that any key is one znode name, and reads back only names it could have written", () => {
    expect(keyNodeName('warehouse/eu 1')).toBe('warehouse%2Feu%201');
    expect(keyOfNodeName('warehouse%2Feu%201')).toBe('warehouse/eu 1');
    expect(keyOfNodeName('api')).toBe('api');
    // Decodes to a key whose node keyNodeName would name differently (upper-case escapes): not ours.
    expect(keyOfNodeName('warehouse%2feu%201')).toBeUndefined();
    expect(keyOfNodeName('%E0%A4%A')).toBeUndefined(); // a malformed escape
  });
});

describe('the limit node', () => {
  it('reads back the limit it holds, at most MAX_LIMIT', () => {
    expect(parseLimit('/l', encodeLimit(3, '/l'))).toBe(3);
    expect(parseLimit('/l', encodeLimit(0, '/l'))).toBe(0);
    expect(parseLimit('/l', encodeValue({ limit: MAX_LIMIT + 5 }, 'test'))).toBe(MAX_LIMIT);
  });

  it('takes a value that is not a whole, non-negative limit for no limit at all', () => {
    for (const limit of [-1, 1.5, '3', null, undefined])
      expect(parseLimit('/l', encodeValue({ limit }, 'test'))).toBeUndefined();
    expect(parseLimit('/l', encodeValue(null, 'test'))).toBeUndefined();
    expect(parseLimit('/l', encodeValue(3, 'test'))).toBeUndefined();
    expect(parseLimit('/l', Buffer.from('x'))).toBeUndefined();
    expect(parseLimit('/l', Buffer.alloc(0))).toBeUndefined();
    expect(parseLimit('/l', null)).toBeUndefined();
  });
});

describe('slots', () => {
  it('a slot is named slot-<index>; a child of any other name is not a slot', () => {
    expect(slotName(12)).toBe('slot-12');
    expect(slotIndex('slot-0')).toBe(0);
    expect(slotIndex('slot-12')).toBe(12);
    expect(slotIndex('slot-999999999')).toBe(999_999_999);
    for (const name of [
      'lock-1',
      'other',
      'slot-',
      'slot-01',
      'slot-x1',
      'slot-1x',
      'slot--1',
      'slot-1234567890',
    ])
      expect(slotIndex(name)).toBeUndefined();
  });

  it('counts every held slot, those above a lowered limit too, and nothing else', () => {
    expect(heldSlots(['slot-0', 'slot-5', 'other', 'lock-1', 'slot-x'])).toBe(2);
    expect(heldSlots([])).toBe(0);
  });

  it('tells when a slot at or above the limit is held (the limit was lowered while its task ran)', () => {
    expect(holdsAboveLimit(['slot-0', 'slot-1'], 2)).toBe(false);
    expect(holdsAboveLimit(['slot-0', 'slot-2'], 2)).toBe(true);
    expect(holdsAboveLimit(['slot-3', 'slot-0'], 3)).toBe(true);
    expect(holdsAboveLimit(['slot-0'], 0)).toBe(true);
    // A child that is not a slot holds no place, whatever the limit.
    expect(holdsAboveLimit(['lock-9', 'other'], 0)).toBe(false);
    expect(holdsAboveLimit(['lock-9'], 1)).toBe(false);
    expect(holdsAboveLimit([], 0)).toBe(false);
  });

  it('a free slot is one below the limit that nobody holds, tried from a given start', () => {
    expect(freeSlots(['slot-0', 'slot-2'], 4, 0)).toEqual([1, 3]);
    expect(freeSlots(['slot-0', 'slot-2'], 4, 3)).toEqual([3, 1]);
    expect(freeSlots(['other'], 3, 1)).toEqual([1, 2, 0]);
    expect(freeSlots(['slot-0', 'slot-1'], 2, 1)).toEqual([]);
    expect(freeSlots([], 0, 0)).toEqual([]);
  });

  it('gives no free slot while the limit is reached counting the slots above a lowered limit, and only the places below it after', () => {
    // The limit went from 6 to 2 while slot-5 ran: slot-0 and slot-5 fill it.
    expect(freeSlots(['slot-0', 'slot-5'], 2, 0)).toEqual([]);
    expect(freeSlots(['slot-4', 'slot-5'], 2, 0)).toEqual([]);
    // One held above it: the places below the limit are free, never the one above.
    expect(freeSlots(['slot-5'], 2, 1)).toEqual([1, 0]);
  });

  it('after taking a slot beside slots above a lowered limit, keeps it only when fewer than limit slots were created before it', () => {
    // The limit went down to 2 while slot-5 ran; two workers each saw one place left and took slot-0 and slot-1.
    const slots = [
      { name: 'slot-5', czxid: 10 },
      { name: 'slot-0', czxid: 20 },
      { name: 'slot-1', czxid: 21 },
    ];
    expect(keepsSlot({ name: 'slot-0', czxid: 20 }, slots, 2)).toBe(true);
    expect(keepsSlot({ name: 'slot-1', czxid: 21 }, slots, 2)).toBe(false);
    // Both workers come to the same answer whatever order they list the slots in.
    expect(keepsSlot({ name: 'slot-0', czxid: 20 }, [...slots].reverse(), 2)).toBe(true);
    expect(keepsSlot({ name: 'slot-1', czxid: 21 }, [...slots].reverse(), 2)).toBe(false);
    // A child that is not a slot takes no place, however early it was created.
    expect(
      keepsSlot({ name: 'slot-1', czxid: 21 }, [{ name: 'lock', czxid: 1 }, ...slots], 3),
    ).toBe(true);
    expect(keepsSlot({ name: 'slot-0', czxid: 20 }, slots, 0)).toBe(false);
  });

  it("reads back a slot's holder, and nothing from a slot zk-plan did not write", () => {
    const at = new Date('2026-11-24T10:00:00Z');
    const record = { task: '/plans/plan-0000000001/task-0000000003', workerId: 'w1', at };
    expect(decodeSlot('/s', encodeSlot(record, '/s'))).toEqual(record);
    expect(decodeSlot('/s', encodeValue({ ...record, extra: 1 }, 'test'))).toEqual(record);
    for (const wrong of [
      { ...record, task: 3 },
      { ...record, workerId: undefined },
      { ...record, at: at.toISOString() },
      null,
      'slot',
    ])
      expect(decodeSlot('/s', encodeValue(wrong, 'test'))).toBeUndefined();
    expect(decodeSlot('/s', Buffer.from('x'))).toBeUndefined();
    expect(decodeSlot('/s', Buffer.alloc(0))).toBeUndefined();
    expect(decodeSlot('/s', null)).toBeUndefined();
  });

  it('refuses a slot record too large for a znode, naming it', () => {
    const record = { task: 'x'.repeat(1_000_001), workerId: 'w1', at: new Date(0) };
    expect(expectThrows(() => encodeSlot(record, '/s'), ValueTooLargeError).message).toMatch(
      /^concurrency slot is \d+ bytes once encoded/,
    );
  });
});
