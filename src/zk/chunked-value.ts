/**
 * Values (results, propagated inputs, kept results) larger than one znode, stored in chunks.
 *
 * ZooKeeper refuses any request over `jute.maxbuffer` (1 MiB − 1 by default), so a value is split
 * when it does not fit in one node. Wire format of the node at `path` (the value node, e.g.
 * `task-N/result`, `task-N/arg-M`, `plan/result-N`):
 *
 * - **Plain** (every value of at most CHUNK_BYTES bytes, unless it looks like a header, see below):
 *   the node's data is the value's superjson text, exactly as zk-plan always stored it and as other
 *   tools read and write it. No children.
 * - **Chunked** (larger values): the node's data is a small superjson *header*,
 *   `superjson.stringify({ zkPlanChunked: 1, bytes: <total>, chunks: <n>, sha256: "<hex>" })`,
 *   i.e. `{"json":{"zkPlanChunked":1,"bytes":5000000,"chunks":6,"sha256":"9f86…"}}`, where `bytes`
 *   is the length of the value's superjson text, `sha256` the lowercase hex SHA-256 of that text,
 *   and `chunks` the number of children `chunk-0000000000` … `chunk-<n−1>` (10-digit zero-padded
 *   index, persistent), each holding a raw slice of the text: chunk i holds bytes
 *   [i × CHUNK_BYTES, min((i + 1) × CHUNK_BYTES, bytes)). Joined in index order they are the value's
 *   superjson text. The header is created first, then the chunks (concurrently); a reader that
 *   finds chunks missing, or bytes whose length or sha256 differ from the header, reports
 *   IncompleteValueError.
 *
 * A node is a header exactly when its data is at most MAX_HEADER_BYTES long, contains the text
 * `"zkPlanChunked"`, and decodes (superjson) to a plain object whose keys are exactly
 * `zkPlanChunked`, `bytes`, `chunks`, `sha256`, with `zkPlanChunked === 1` (`isHeaderLike`).
 * A user value could literally be such an object: the writer stores *any* value that passes that
 * same test in chunked form (a header plus one chunk), so the node at `path` is then a genuine
 * header and the test never misreads a user value. The writer and the reader use the one function,
 * so the rule holds whatever bytes they are given.
 *
 * Crash safety: every write is a create, so retries are safe. A crash part-way through a chunked
 * write leaves a header with some chunks missing: `writeValueIfAbsent` (for values whose bytes are
 * fixed: propagated inputs, kept results) completes it; `readValue` reports IncompleteValueError so
 * the value's owner can `deleteValue` and write it again. `deleteValue` removes the chunks before
 * the header, so a crash while deleting also leaves an incomplete value (reads report it), never a
 * wrong one. A reader racing a writer that is still creating chunks also sees IncompleteValueError.
 */
import { createHash } from 'node:crypto';
import superjson from 'superjson';
import { MalformedNodeError } from '../errors/task-errors.js';
import { InvalidArgumentError } from '../errors/usage-errors.js';
import { IncompleteValueError, ResultTooLargeError } from '../errors/value-errors.js';
import { ZkError, isZkError } from '../errors/zk-error.js';
import { decodeValue } from '../serialization/codec.js';
import { childPath } from './layout.js';
import { DEFAULTS } from '../config/defaults.js';
import { NATIVE } from './native-client.js';
import type { WriteOptions } from './zk-client.js';
import type { Zk } from './zk.js';

/** Payload per chunk node (and the largest value stored as a single plain node): under jute.maxbuffer with room for the path. */
export const CHUNK_BYTES = 900_000;

/** Prefix of the chunk children of a chunked value's node. */
export const CHUNK_PREFIX = 'chunk-';

/** Any node longer than this is never a header (a header we write is about 130 bytes). */
const MAX_HEADER_BYTES = 1024;

const HEADER_MARKER = Buffer.from('"zkPlanChunked"', 'utf8');
const HEADER_KEYS: ReadonlySet<string> = new Set(['zkPlanChunked', 'bytes', 'chunks', 'sha256']);
const CHUNK_NAME = /^chunk-\d{10}$/;
const SHA256_HEX = /^[0-9a-f]{64}$/;
/** How many missing chunk indices an error message lists. */
const LISTED_MISSING = 10;

export interface ValueWriteOptions extends WriteOptions {
  /** Largest encoded value accepted, in bytes; beyond it ResultTooLargeError is thrown before anything is written. @defaultValue DEFAULTS.maxResultBytes */
  readonly maxBytes?: number;
}

/** The header of a chunked value, as stored in its node. */
interface ChunkHeader {
  readonly zkPlanChunked: 1;
  readonly bytes: number;
  readonly chunks: number;
  readonly sha256: string;
}

/** What a write puts at `path`: the plain bytes, or a header and the slices for its chunks. */
type Layout = { readonly kind: 'plain' } | { readonly kind: 'chunked'; readonly header: ChunkHeader; readonly headerBytes: Buffer };

/**
 * Writes `encoded` (already superjson-encoded bytes) at `path`: a single node when it fits, else a
 * header node + chunk children. Resolves `'existed'` (writing nothing) when `path` already exists.
 * Throws ResultTooLargeError, before writing anything, when `encoded` is over `maxBytes`.
 */
export async function writeValue(zk: Zk, path: string, encoded: Buffer, options: ValueWriteOptions = {}): Promise<'created' | 'existed'> {
  const layout = layoutOf(path, encoded, options.maxBytes);
  const write = writeOptionsOf(options);
  if (layout.kind === 'plain') return (await zk.createIfAbsent(path, encoded, 'persistent', write)) ? 'created' : 'existed';
  if (!(await zk.createIfAbsent(path, layout.headerBytes, 'persistent', write))) return 'existed';
  await createChunks(zk, path, encoded, range(layout.header.chunks), write);
  return 'created';
}

/**
 * Idempotent form for values whose bytes are fixed (propagated args, kept results): creates the
 * value if `path` is absent; if `path` holds the header of these very bytes, creates any missing
 * chunk. Never fails on NODE_EXISTS: a different value already at `path` is left as it is.
 */
export async function writeValueIfAbsent(zk: Zk, path: string, encoded: Buffer, options: ValueWriteOptions = {}): Promise<void> {
  const layout = layoutOf(path, encoded, options.maxBytes);
  const write = writeOptionsOf(options);
  if (layout.kind === 'plain') {
    await zk.createIfAbsent(path, encoded, 'persistent', write);
    return;
  }
  const { header } = layout;
  if (await zk.createIfAbsent(path, layout.headerBytes, 'persistent', write)) {
    await createChunks(zk, path, encoded, range(header.chunks), write);
    return;
  }
  // The node exists: complete it if it is the header of the same bytes, sliced the same way.
  const node = await zk.tryGetData(path);
  if (node === undefined) return; // deleted meanwhile (consumed by its reader): nothing to complete
  let existing: ChunkHeader | undefined;
  try {
    existing = parseHeader(path, node.data);
  } catch {
    return; // a malformed header: not ours to complete, readers report it
  }
  if (existing === undefined || existing.bytes !== header.bytes || existing.chunks !== header.chunks || existing.sha256 !== header.sha256) return;
  const listing = await zk.tryGetChildren(path);
  if (listing === undefined) return;
  const present = new Set(listing.children);
  const missing = range(header.chunks).filter((index) => !present.has(chunkName(index)));
  if (missing.length === 0) return;
  // A header written with another chunk size would be corrupted by our slices: check the chunks it has.
  const stats = await Promise.all(
    range(header.chunks)
      .filter((index) => present.has(chunkName(index)))
      .map(async (index) => ({ index, stat: await zk.exists(childPath(path, chunkName(index))) })),
  );
  if (stats.some(({ index, stat }) => stat !== undefined && stat.dataLength !== sliceOf(encoded, index).length)) return;
  await createChunks(zk, path, encoded, missing, write);
}

/**
 * Reads the bytes at `path`, joining chunks; undefined when the node is absent. Throws
 * IncompleteValueError when chunks are missing or the joined bytes do not match the header's
 * total or sha256, MalformedNodeError when the header itself is invalid.
 */
export async function readValue(zk: Zk, path: string): Promise<Buffer | undefined> {
  const node = await zk.tryGetData(path);
  if (node === undefined) return undefined;
  const data = node.data ?? Buffer.alloc(0);
  const header = parseHeader(path, data);
  if (header === undefined) return data;

  const listing = await zk.tryGetChildren(path);
  if (listing === undefined) return undefined; // deleted since we read it
  const present = new Set(listing.children);
  const missing = range(header.chunks).filter((index) => !present.has(chunkName(index)));
  if (missing.length > 0) throw new IncompleteValueError(path, `${describeIndices(missing)} of its ${header.chunks} chunks missing`);

  const parts = await Promise.all(range(header.chunks).map((index) => zk.tryGetData(childPath(path, chunkName(index)))));
  const vanished = parts.flatMap((part, index) => (part === undefined ? [index] : []));
  if (vanished.length > 0) throw new IncompleteValueError(path, `${describeIndices(vanished)} of its ${header.chunks} chunks deleted while reading`);
  const joined = Buffer.concat(parts.map((part) => part?.data ?? Buffer.alloc(0)));
  if (joined.length !== header.bytes) {
    throw new IncompleteValueError(path, `its ${header.chunks} chunks hold ${joined.length} bytes, the header says ${header.bytes}`);
  }
  const digest = sha256(joined);
  if (digest !== header.sha256) throw new IncompleteValueError(path, `the sha256 of its chunks is ${digest}, the header says ${header.sha256}`);
  return joined;
}

/** Deletes the value node and its chunks (safe if absent); `fence` applies to every delete. */
export async function deleteValue(zk: Zk, path: string, options: WriteOptions = {}): Promise<void> {
  const write = writeOptionsOf(options);
  // Plain values have no children: one delete is enough.
  if (await tryDelete(zk, path, write)) return;
  const listing = await zk.tryGetChildren(path);
  if (listing === undefined) return;
  await settleAll(listing.children.filter((name) => CHUNK_NAME.test(name)).map((name) => zk.deleteIfPresent(childPath(path, name), -1, write)));
  if (await tryDelete(zk, path, write)) return;
  // An unexpected child (not a chunk), or a chunk created meanwhile by a concurrent writer.
  if (write.fence !== undefined && !zk.isCurrent(write.fence)) {
    throw new ZkError('delete', NATIVE.ZSESSIONEXPIRED, path, `ZooKeeper delete of ${path} refused: session ${write.fence.id} that guards it has expired`);
  }
  await zk.deleteRecursive(path);
}

/**
 * True when `data` is a chunked value's header by the rule in the file comment: short, contains
 * `"zkPlanChunked"`, decodes to a plain object with exactly the header's keys and `zkPlanChunked === 1`.
 * The writer chunks every value for which this holds, so it never misreads a user value.
 */
export function isHeaderLike(data: Buffer | null | undefined): boolean {
  return headerLike(data) !== undefined;
}

function headerLike(data: Buffer | null | undefined): Record<string, unknown> | undefined {
  if (data === null || data === undefined || data.length > MAX_HEADER_BYTES || !data.includes(HEADER_MARKER)) return undefined;
  let value: unknown;
  try {
    value = decodeValue('', data);
  } catch {
    return undefined; // not superjson: a plain value of another tool, the caller's decode reports it
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const prototype: unknown = Object.getPrototypeOf(value);
  if (prototype !== Object.prototype && prototype !== null) return undefined;
  const keys = Object.keys(value);
  if (keys.length !== HEADER_KEYS.size || !keys.every((key) => HEADER_KEYS.has(key))) return undefined;
  const record = value as Record<string, unknown>;
  return record['zkPlanChunked'] === 1 ? record : undefined;
}

/** The header stored in `data`, undefined when `data` is a plain value; MalformedNodeError when it is header-like but invalid. */
function parseHeader(path: string, data: Buffer | null): ChunkHeader | undefined {
  const record = headerLike(data);
  if (record === undefined) return undefined;
  const { bytes, chunks, sha256: digest } = record;
  if (typeof bytes !== 'number' || !Number.isSafeInteger(bytes) || bytes < 0) {
    throw new MalformedNodeError(path, `its chunked-value header has bytes ${JSON.stringify(bytes)}, expected a non-negative integer`);
  }
  if (typeof chunks !== 'number' || !Number.isSafeInteger(chunks) || chunks < 0 || chunks > Math.max(bytes, 1)) {
    throw new MalformedNodeError(path, `its chunked-value header has chunks ${JSON.stringify(chunks)}, expected an integer from 0 to bytes`);
  }
  if (typeof digest !== 'string' || !SHA256_HEX.test(digest)) {
    throw new MalformedNodeError(path, `its chunked-value header has sha256 ${JSON.stringify(digest)}, expected 64 lowercase hex digits`);
  }
  return { zkPlanChunked: 1, bytes, chunks, sha256: digest };
}

/** Checks the size limit and decides how `encoded` is stored. */
function layoutOf(path: string, encoded: Buffer, maxBytes: number | undefined): Layout {
  const limit = maxBytes ?? DEFAULTS.maxResultBytes;
  if (typeof limit !== 'number' || !Number.isSafeInteger(limit) || limit < 1) {
    throw new InvalidArgumentError('maxBytes', `expected a positive integer number of bytes, got ${String(limit)}`, path);
  }
  if (encoded.length > limit) throw new ResultTooLargeError(encoded.length, limit, path);
  if (encoded.length <= CHUNK_BYTES && !isHeaderLike(encoded)) return { kind: 'plain' };
  const header: ChunkHeader = {
    zkPlanChunked: 1,
    bytes: encoded.length,
    chunks: Math.ceil(encoded.length / CHUNK_BYTES),
    sha256: sha256(encoded),
  };
  return { kind: 'chunked', header, headerBytes: Buffer.from(superjson.stringify(header), 'utf8') };
}

/** Creates the given chunks concurrently (pipelined on the session); waits for all, then throws the first failure. */
async function createChunks(zk: Zk, path: string, encoded: Buffer, indices: readonly number[], write: WriteOptions): Promise<void> {
  await settleAll(indices.map((index) => zk.createIfAbsent(childPath(path, chunkName(index)), sliceOf(encoded, index), 'persistent', write)));
}

/** Deletes `path` if present; false when it still has children. */
async function tryDelete(zk: Zk, path: string, write: WriteOptions): Promise<boolean> {
  try {
    await zk.deleteIfPresent(path, -1, write);
    return true;
  } catch (error) {
    if (isZkError(error, 'NOT_EMPTY')) return false;
    throw error;
  }
}

/** Like Promise.all, but lets every operation finish before throwing the first failure (no write left in flight). */
async function settleAll(operations: ReadonlyArray<Promise<unknown>>): Promise<void> {
  const outcomes = await Promise.allSettled(operations);
  const failure = outcomes.find((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected');
  if (failure !== undefined) throw failure.reason;
}

function writeOptionsOf(options: WriteOptions): WriteOptions {
  return options.fence === undefined ? {} : { fence: options.fence };
}

function chunkName(index: number): string {
  return `${CHUNK_PREFIX}${String(index).padStart(10, '0')}`;
}

function sliceOf(encoded: Buffer, index: number): Buffer {
  return encoded.subarray(index * CHUNK_BYTES, Math.min((index + 1) * CHUNK_BYTES, encoded.length));
}

function range(count: number): number[] {
  return Array.from({ length: count }, (_, index) => index);
}

function sha256(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex');
}

function describeIndices(indices: readonly number[]): string {
  const listed = indices.slice(0, LISTED_MISSING).join(', ');
  return `chunk${indices.length === 1 ? '' : 's'} ${listed}${indices.length > LISTED_MISSING ? `, … (${indices.length} in all)` : ''}`;
}
