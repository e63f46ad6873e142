import superjson from 'superjson';
import {
  MalformedNodeError,
  UnserializableValueError,
  ValueTooLargeError,
} from '../errors/task-errors.js';

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
 * (functions, symbols, class instances, NaN as a Map key), naming where it sits, e.g. `params[1].client`.
 * NaN, Infinity, -Infinity and -0 elsewhere are kept exactly (encodeValue checks it).
 */
export function assertSerializable(value: unknown, where: string, path?: string): void {
  specialNumbersIn(value, where, path);
}

/** Checks `value` as assertSerializable does; returns where it holds NaN, ±Infinity or -0 (which superjson encodes as text). */
function specialNumbersIn(value: unknown, where: string, path?: string): string[] {
  const seen = new Set<object>();
  const specials: string[] = [];
  const visit = (current: unknown, at: string): void => {
    switch (typeof current) {
      case 'number':
        if (!Number.isFinite(current) || Object.is(current, -0)) specials.push(at);
        return;
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
      const className =
        (current as { constructor?: { name?: string } }).constructor?.name ?? 'unknown';
      throw new UnserializableValueError(
        where,
        `${at} is an instance of ${className}, which would lose its class`,
        path,
      );
    }
    if (current instanceof Date && Number.isNaN(current.getTime())) {
      throw new UnserializableValueError(
        where,
        `${at} is an invalid Date, which would come back as null`,
        path,
      );
    }
    if (current instanceof Map) {
      for (const [key, entry] of current) {
        // superjson can lose such an entry altogether (when a NaN comes before it in the value).
        if (Number.isNaN(key))
          throw new UnserializableValueError(
            where,
            `${at} has NaN as a key, which would not come back`,
            path,
          );
        visit(key, `${at}<key>`);
        visit(entry, `${at}.get(${String(key)})`);
      }
    } else if (current instanceof Set) {
      let index = 0;
      for (const entry of current) visit(entry, `${at}<entry ${index++}>`);
    } else if (Array.isArray(current)) {
      for (let index = 0; index < current.length; index++) {
        if (!Object.hasOwn(current, index))
          throw new UnserializableValueError(
            where,
            `${at} has a hole at [${index}], which would come back as null`,
            path,
          );
        visit(current[index], `${at}[${index}]`);
      }
    } else if (!(
      current instanceof Date ||
      current instanceof RegExp ||
      current instanceof URL ||
      current instanceof Error
    )) {
      for (const key of Object.keys(current))
        visit((current as Record<string, unknown>)[key], `${at}.${key}`);
      if (Object.getOwnPropertySymbols(current).length > 0) {
        throw new UnserializableValueError(where, `${at} has symbol keys`, path);
      }
    }
  };
  visit(value, where);
  return specials;
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
export function encodeValue(
  value: unknown,
  where: string,
  path?: string,
  maxBytes: number = MAX_VALUE_BYTES,
): Buffer {
  const specials = specialNumbersIn(value, where, path);
  const text = superjson.stringify(value);
  // superjson writes NaN, ±Infinity and -0 as text with a type tag: make sure they come back exactly.
  if (specials.length > 0 && !sameAfterRoundTrip(value, superjson.parse(text))) {
    throw new UnserializableValueError(
      where,
      `${specials.join(', ')} (NaN, Infinity or -0) would not come back exactly`,
      path,
    );
  }
  const encoded = Buffer.from(text, 'utf8');
  if (encoded.length > maxBytes)
    throw new ValueTooLargeError(where, encoded.length, maxBytes, path);
  return encoded;
}

/** Whether superjson gave back `original` (as far as it keeps values: an Error's name and message): numbers compared with Object.is. */
function sameAfterRoundTrip(original: unknown, decoded: unknown): boolean {
  if (typeof original !== 'object' || original === null) return Object.is(original, decoded);
  if (
    typeof decoded !== 'object' ||
    decoded === null ||
    Object.getPrototypeOf(original) !== Object.getPrototypeOf(decoded)
  )
    return false;
  if (original instanceof Error)
    return (
      original.name === (decoded as Error).name && original.message === (decoded as Error).message
    );
  if (original instanceof Date || original instanceof RegExp || original instanceof URL)
    return String(original) === String(decoded);
  const entries = (value: object): unknown[][] =>
    value instanceof Map
      ? [...value].map(([key, entry]) => [key, entry])
      : value instanceof Set
        ? [...value].map((entry) => [entry])
        : Object.entries(value);
  const [a, b] = [entries(original), entries(decoded)];
  return (
    a.length === b.length &&
    a.every((pair, index) => pair.every((item, part) => sameAfterRoundTrip(item, b[index]?.[part])))
  );
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
    throw new MalformedNodeError(
      path,
      `its value is not JSON (${(cause as Error).message})`,
      cause,
    );
  }
  if (typeof parsed !== 'object' || parsed === null || !('json' in parsed)) {
    throw new MalformedNodeError(
      path,
      'its value is JSON but not superjson ({"json": …, "meta"?: …})',
    );
  }
  try {
    return superjson.deserialize(parsed as Parameters<typeof superjson.deserialize>[0]);
  } catch (cause) {
    throw new MalformedNodeError(
      path,
      `its superjson value cannot be decoded (${(cause as Error).message})`,
      cause,
    );
  }
}
