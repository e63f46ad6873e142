import superjson from 'superjson';
import { MalformedNodeError, UnserializableValueError, ValueTooLargeError } from '../errors/task-errors.js';

/**
 * Prototypes superjson round-trips faithfully; any other class instance would come back as a
 * plain object. Only plain `Error`s (name and message survive): subclasses come back as `Error`.
 */
const FAITHFUL_PROTOTYPES: ReadonlySet<object | null> = new Set<object | null>([
  Object.prototype,
  Array.prototype,
  null,
  Date.prototype,
  Map.prototype,
  Set.prototype,
  RegExp.prototype,
  URL.prototype,
  Error.prototype,
]);

/**
 * Throws UnserializableValueError when `value` holds something superjson would drop or change
 * (functions, symbols, class instances), naming where it sits, e.g. `params[1].client`.
 */
export function assertSerializable(value: unknown, where: string, path?: string): void {
  const seen = new Set<object>();
  const visit = (current: unknown, at: string): void => {
    switch (typeof current) {
      case 'function':
        throw new UnserializableValueError(where, `${at} is a function`, path);
      case 'symbol':
        throw new UnserializableValueError(where, `${at} is a symbol`, path);
      case 'object':
        break;
      default:
        return;
    }
    if (current === null || seen.has(current)) return;
    seen.add(current);
    const prototype: unknown = Object.getPrototypeOf(current);
    if (!FAITHFUL_PROTOTYPES.has(prototype as object | null)) {
      const className = (current as { constructor?: { name?: string } }).constructor?.name ?? 'unknown';
      throw new UnserializableValueError(where, `${at} is an instance of ${className}, which would lose its class`, path);
    }
    if (current instanceof Date && Number.isNaN(current.getTime())) {
      throw new UnserializableValueError(where, `${at} is an invalid Date, which would come back as null`, path);
    }
    if (current instanceof Map) {
      for (const [key, entry] of current) {
        visit(key, `${at}<key>`);
        visit(entry, `${at}.get(${String(key)})`);
      }
    } else if (current instanceof Set) {
      let index = 0;
      for (const entry of current) visit(entry, `${at}<entry ${index++}>`);
    } else if (Array.isArray(current)) {
      for (let index = 0; index < current.length; index++) {
        if (!Object.hasOwn(current, index)) throw new UnserializableValueError(where, `${at} has a hole at [${index}], which would come back as null`, path);
        visit(current[index], `${at}[${index}]`);
      }
    } else if (!(current instanceof Date || current instanceof RegExp || current instanceof URL || current instanceof Error)) {
      for (const key of Object.keys(current)) visit((current as Record<string, unknown>)[key], `${at}.${key}`);
      if (Object.getOwnPropertySymbols(current).length > 0) {
        throw new UnserializableValueError(where, `${at} has symbol keys`, path);
      }
    }
  };
  visit(value, where);
}

/**
 * The most bytes one encoded value may have: ZooKeeper refuses (by dropping the connection)
 * requests over `jute.maxbuffer`, 1 MiB − 1 by default, and a request carries a path besides the data.
 */
export const MAX_VALUE_BYTES = 1_000_000;

/**
 * Encodes a value as zk-plan stores every znode value: `superjson.stringify(value)` in UTF-8.
 * Values meant for one znode are limited to MAX_VALUE_BYTES; results and inputs, stored in
 * chunks, pass a larger `maxBytes`.
 */
export function encodeValue(value: unknown, where: string, path?: string, maxBytes: number = MAX_VALUE_BYTES): Buffer {
  assertSerializable(value, where, path);
  const encoded = Buffer.from(superjson.stringify(value), 'utf8');
  if (encoded.length > maxBytes) throw new ValueTooLargeError(where, encoded.length, maxBytes, path);
  return encoded;
}

/** Decodes a znode value written by `encodeValue` (or any superjson writer); throws MalformedNodeError otherwise. */
export function decodeValue(path: string, data: Buffer | string | null | undefined): unknown {
  if (data === null || data === undefined || data.length === 0) {
    throw new MalformedNodeError(path, 'it has no value, expected superjson text');
  }
  const text = typeof data === 'string' ? data : data.toString('utf8');
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (cause) {
    throw new MalformedNodeError(path, `its value is not JSON (${(cause as Error).message})`, cause);
  }
  if (typeof parsed !== 'object' || parsed === null || !('json' in parsed)) {
    throw new MalformedNodeError(path, 'its value is JSON but not superjson ({"json": …, "meta"?: …})');
  }
  try {
    return superjson.deserialize(parsed as Parameters<typeof superjson.deserialize>[0]);
  } catch (cause) {
    throw new MalformedNodeError(path, `its superjson value cannot be decoded (${(cause as Error).message})`, cause);
  }
}
