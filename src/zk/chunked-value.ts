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
 *   finds chunks missing (or deleted while it reads them) reports IncompleteValueError.
 *
 * Reading a header an attacker (anyone who can write a plan's nodes) may have written: nothing is
 * allocated, listed or read in proportion to a number the header states. The reader checks, before
 * anything else, that the header is what a writer makes (`chunks === ceil(bytes / CHUNK_BYTES)`,
 * `bytes ≥ 1`) and that `bytes` is within the reader's own limit (`maxBytes` of `readValue`, see
 * below); then it lists the node's children and compares that real listing with the header before
 * it reads a chunk, so the work is bounded by what ZooKeeper actually holds. What is permanent and
 * what is transient:
 *
 * - MalformedNodeError (code MALFORMED_NODE: a worker charges it to the task and fails it for good,
 *   never retries it): a header that no writer makes (fields of the wrong type, `chunks` not
 *   `ceil(bytes / CHUNK_BYTES)`, a bad sha256), `bytes` over the reader's limit, a `chunk-N` child
 *   with N ≥ `chunks`, and chunks whose lengths or sha256 do not match the header while the header
 *   is still the same node (same czxid). Chunks are created once each, with their slice, and never
 *   change, so none of this can come from a writer that is still at work or crashed part-way.
 * - IncompleteValueError (code INCOMPLETE_VALUE, not charged: tried again later): a well-formed
 *   header with chunks missing (a writer still creating them, or one that crashed part-way), chunks
 *   deleted while being read, or a node deleted and written again between the reads.
 *
 * The reader's limit: `readValue(zk, path, { maxBytes })`, `DEFAULTS.maxResultBytes` (16 MiB) when
 * not given. A worker reads its inputs and its task's result with its own `maxResultBytes` (the
 * limit of what it writes); getResult, snapshots.export/snapshots.rerun, the web view and addTask (taking a
 * finished producer's kept result) read with the ZkPlan's `maxResultBytes` (`ZkPlan.connect`, which
 * is also its workers' default). A cluster whose workers write larger values gives its readers at
 * least the same limit. The spec record (`<plan>/spec`), written without a size limit, is read
 * without one: the listing check still bounds the work by what is stored.
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
import type { WriteOptions } from './zk-client-types.js';
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
/** What a MalformedNodeError about a chunked value tells to do. */
const FORGED =
  'zk-plan never writes that, so the node was forged or corrupted: delete it with its chunk-* children and write the value again (a task that failed for it runs again once the failed tasks of its plan are retried)';

export interface ValueWriteOptions extends WriteOptions {
  /** Largest encoded value accepted, in bytes; beyond it ResultTooLargeError is thrown before anything is written. @defaultValue DEFAULTS.maxResultBytes */
  readonly maxBytes?: number;
}

export interface ValueReadOptions {
  /**
   * The reader's limit: the largest value (encoded bytes) it reads. A header claiming more is
   * refused with MalformedNodeError before anything else is read. @defaultValue DEFAULTS.maxResultBytes
   */
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
type Layout =
  | { readonly kind: 'plain' }
  | { readonly kind: 'chunked'; readonly header: ChunkHeader; readonly headerBytes: Buffer };

/**
 * Writes `encoded` (already superjson-encoded bytes) at `path`: a single node when it fits, else a
 * header node + chunk children. Resolves `'existed'` (writing nothing) when `path` already exists.
 * Throws ResultTooLargeError, before writing anything, when `encoded` is over `maxBytes`.
 */
export async function writeValue(
  zk: Zk,
  path: string,
  encoded: Buffer,
  options: ValueWriteOptions = {},
): Promise<'created' | 'existed'> {
  const layout = layoutOf(path, encoded, options.maxBytes);
  const write = writeOptionsOf(options);
  if (layout.kind === 'plain')
    return (await zk.createIfAbsent(path, encoded, 'persistent', write)) ? 'created' : 'existed';
  if (!(await zk.createIfAbsent(path, layout.headerBytes, 'persistent', write))) return 'existed';
  await createChunks(zk, path, encoded, range(layout.header.chunks), write);
  return 'created';
}

/**
 * Idempotent form for values whose bytes are fixed (propagated args, kept results): creates the
 * value if `path` is absent; if `path` holds the header of these very bytes, creates any missing
 * chunk. Never fails on NODE_EXISTS: a different value already at `path` is left as it is.
 */
export async function writeValueIfAbsent(
  zk: Zk,
  path: string,
  encoded: Buffer,
  options: ValueWriteOptions = {},
): Promise<void> {
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
    existing = parseHeader(path, node.data, Number.MAX_SAFE_INTEGER); // only compared with ours, whose size is known
  } catch {
    return; // a malformed header: not ours to complete, readers report it
  }
  if (
    existing === undefined ||
    existing.bytes !== header.bytes ||
    existing.chunks !== header.chunks ||
    existing.sha256 !== header.sha256
  )
    return;
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
  if (
    stats.some(
      ({ index, stat }) => stat !== undefined && stat.dataLength !== sliceOf(encoded, index).length,
    )
  )
    return;
  await createChunks(zk, path, encoded, missing, write);
}

/**
 * Reads the bytes at `path`, joining chunks; undefined when the node is absent. Throws
 * IncompleteValueError when chunks are missing (or deleted while reading), MalformedNodeError when
 * the header is not one a writer makes, claims more than `maxBytes`, or does not match the chunks
 * stored under it (see the file comment). Never allocates in proportion to what the header says:
 * the real listing is compared with the header before any chunk is read.
 */
export async function readValue(
  zk: Zk,
  path: string,
  options: ValueReadOptions = {},
): Promise<Buffer | undefined> {
  const limit = limitOf(path, options.maxBytes);
  const node = await zk.tryGetData(path);
  if (node === undefined) return undefined;
  const data = node.data ?? Buffer.alloc(0);
  const header = parseHeader(path, data, limit);
  if (header === undefined) return data;

  const listing = await zk.tryGetChildren(path);
  if (listing === undefined) return undefined; // deleted since we read it
  if (listing.stat.czxid !== node.stat.czxid)
    throw new IncompleteValueError(path, 'it was deleted and written again while it was read');
  const present = listedChunks(path, header, listing.children);
  if (present.size < header.chunks) {
    throw new IncompleteValueError(
      path,
      `${describeIndices(firstMissing(header.chunks, present), header.chunks - present.size)} of its ${header.chunks} chunks missing`,
    );
  }

  // Every chunk the header names is listed: as many reads as ZooKeeper holds children.
  const parts = await Promise.all(
    range(header.chunks).map((index) => zk.tryGetData(childPath(path, chunkName(index)))),
  );
  const vanished = parts.flatMap((part, index) => (part === undefined ? [index] : []));
  if (vanished.length > 0)
    throw new IncompleteValueError(
      path,
      `${describeIndices(vanished, vanished.length)} of its ${header.chunks} chunks deleted while reading`,
    );
  const datas = parts.map((part) => part?.data ?? Buffer.alloc(0));
  const wrong = datas.findIndex((part, index) => part.length !== sliceLength(header.bytes, index));
  if (wrong >= 0) {
    const held = datas[wrong]?.length ?? 0;
    return await notAsWritten(
      zk,
      path,
      node.stat.czxid,
      `its chunk ${wrong} holds ${held} bytes, where a value of ${header.bytes} bytes has ${sliceLength(header.bytes, wrong)}`,
    );
  }
  const joined = Buffer.concat(datas, header.bytes);
  const digest = sha256(joined);
  if (digest !== header.sha256)
    return await notAsWritten(
      zk,
      path,
      node.stat.czxid,
      `the sha256 of its chunks is ${digest}, the header says ${header.sha256}`,
    );
  return joined;
}

/** Deletes the value node and its chunks (safe if absent); `fence` applies to every delete. */
export async function deleteValue(zk: Zk, path: string, options: WriteOptions = {}): Promise<void> {
  const write = writeOptionsOf(options);
  // Plain values have no children: one delete is enough.
  if (await tryDelete(zk, path, write)) return;
  const listing = await zk.tryGetChildren(path);
  if (listing === undefined) return;
  await settleAll(
    listing.children
      .filter((name) => CHUNK_NAME.test(name))
      .map((name) => zk.deleteIfPresent(childPath(path, name), -1, write)),
  );
  if (await tryDelete(zk, path, write)) return;
  // An unexpected child (not a chunk), or a chunk created meanwhile by a concurrent writer.
  if (write.fence !== undefined && !zk.isCurrent(write.fence)) {
    throw new ZkError(
      'delete',
      NATIVE.ZSESSIONEXPIRED,
      path,
      `ZooKeeper delete of ${path} refused: session ${write.fence.id} that guards it has expired`,
    );
  }
  await zk.deleteRecursive(path);
}

/**
 * True when a writer stores `encoded` as a plain node (no chunk children), by the rule in the file
 * comment: at most CHUNK_BYTES long and not header-like. One delete then removes the node.
 */
export function isStoredPlain(encoded: Buffer): boolean {
  return encoded.length <= CHUNK_BYTES && !isHeaderLike(encoded);
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
  if (
    data === null ||
    data === undefined ||
    data.length > MAX_HEADER_BYTES ||
    !data.includes(HEADER_MARKER)
  )
    return undefined;
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
  if (keys.length !== HEADER_KEYS.size || !keys.every((key) => HEADER_KEYS.has(key)))
    return undefined;
  const record = value as Record<string, unknown>;
  return record['zkPlanChunked'] === 1 ? record : undefined;
}

/**
 * The header stored in `data`, undefined when `data` is a plain value; MalformedNodeError when it is
 * header-like but not a header a writer makes (`chunks === ceil(bytes / CHUNK_BYTES)`), or claims
 * more than `limit` bytes. Checked before anything is read or allocated for the value.
 */
function parseHeader(path: string, data: Buffer | null, limit: number): ChunkHeader | undefined {
  const record = headerLike(data);
  if (record === undefined) return undefined;
  const { bytes, chunks, sha256: digest } = record;
  if (typeof bytes !== 'number' || !Number.isSafeInteger(bytes) || bytes < 1) {
    throw new MalformedNodeError(
      path,
      `its chunked-value header has bytes ${JSON.stringify(bytes)}, expected a positive integer; ${FORGED}`,
    );
  }
  const expected = Math.ceil(bytes / CHUNK_BYTES);
  if (chunks !== expected) {
    throw new MalformedNodeError(
      path,
      `its chunked-value header has chunks ${JSON.stringify(chunks)}, but a value of ${bytes} bytes is stored in ${expected} chunk${expected === 1 ? '' : 's'} of ${CHUNK_BYTES} bytes; ${FORGED}`,
    );
  }
  if (typeof digest !== 'string' || !SHA256_HEX.test(digest)) {
    throw new MalformedNodeError(
      path,
      `its chunked-value header has sha256 ${JSON.stringify(digest)}, expected 64 lowercase hex digits; ${FORGED}`,
    );
  }
  if (bytes > limit) {
    throw new MalformedNodeError(
      path,
      `its chunked-value header says the value is ${bytes} bytes, more than this reader's limit of ${limit} bytes: give the reader a maxResultBytes` +
        ` at least as large as the writers' (the workers' option, and that of the client that reads results, exports plans or serves the web view), or, if no writer has such a limit, the node was forged: delete it with its chunk-* children`,
    );
  }
  return { zkPlanChunked: 1, bytes, chunks: expected, sha256: digest };
}

/**
 * The indices of the chunk children listed, all below the header's `chunks`; MalformedNodeError for
 * a `chunk-N` child with N ≥ `chunks`, which no writer of that header creates. The listing is
 * ZooKeeper's own, so the set is as large as what is stored, whatever the header says.
 */
function listedChunks(path: string, header: ChunkHeader, children: readonly string[]): Set<number> {
  const present = new Set<number>();
  for (const name of children) {
    if (!CHUNK_NAME.test(name)) continue; // another child: deleteValue removes it, reads ignore it
    const index = Number(name.slice(CHUNK_PREFIX.length));
    if (index >= header.chunks) {
      throw new MalformedNodeError(
        path,
        `it has a child ${name}, but its chunked-value header says it has ${header.chunks} chunk${header.chunks === 1 ? '' : 's'}; ${FORGED}`,
      );
    }
    present.add(index);
  }
  return present;
}

/** Up to LISTED_MISSING of the indices below `chunks` not in `present`, in order; visits at most `present.size + LISTED_MISSING` indices. */
function firstMissing(chunks: number, present: ReadonlySet<number>): number[] {
  const missing: number[] = [];
  for (let index = 0; index < chunks && missing.length < LISTED_MISSING; index++)
    if (!present.has(index)) missing.push(index);
  return missing;
}

/**
 * Chunks that do not hold the value their header describes. Each chunk is created once with its
 * slice, so under the same header node that is permanent (MalformedNodeError); if the node was
 * deleted or written again meanwhile, the chunks read may belong to another value (IncompleteValueError).
 */
async function notAsWritten(zk: Zk, path: string, czxid: number, problem: string): Promise<never> {
  const now = await zk.exists(path);
  if (now === undefined || now.czxid !== czxid)
    throw new IncompleteValueError(
      path,
      `${problem}, and it was deleted or written again while it was read`,
    );
  throw new MalformedNodeError(path, `${problem}; ${FORGED}`);
}

/** The reader's limit, checked like a writer's. */
function limitOf(path: string, maxBytes: number | undefined): number {
  const limit = maxBytes ?? DEFAULTS.maxResultBytes;
  if (typeof limit !== 'number' || !Number.isSafeInteger(limit) || limit < 1) {
    throw new InvalidArgumentError(
      'maxBytes',
      `expected a positive integer number of bytes, got ${String(limit)}`,
      path,
    );
  }
  return limit;
}

/** Checks the size limit and decides how `encoded` is stored. */
function layoutOf(path: string, encoded: Buffer, maxBytes: number | undefined): Layout {
  const limit = limitOf(path, maxBytes);
  if (encoded.length > limit) throw new ResultTooLargeError(encoded.length, limit, path);
  if (isStoredPlain(encoded)) return { kind: 'plain' };
  const header: ChunkHeader = {
    zkPlanChunked: 1,
    bytes: encoded.length,
    chunks: Math.ceil(encoded.length / CHUNK_BYTES),
    sha256: sha256(encoded),
  };
  return { kind: 'chunked', header, headerBytes: Buffer.from(superjson.stringify(header), 'utf8') };
}

/** Creates the given chunks concurrently (pipelined on the session); waits for all, then throws the first failure. */
async function createChunks(
  zk: Zk,
  path: string,
  encoded: Buffer,
  indices: readonly number[],
  write: WriteOptions,
): Promise<void> {
  await settleAll(
    indices.map((index) =>
      zk.createIfAbsent(
        childPath(path, chunkName(index)),
        sliceOf(encoded, index),
        'persistent',
        write,
      ),
    ),
  );
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
  const failure = outcomes.find(
    (outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected',
  );
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

/** The length of chunk `index` of a value of `bytes` bytes. */
function sliceLength(bytes: number, index: number): number {
  return Math.max(0, Math.min(CHUNK_BYTES, bytes - index * CHUNK_BYTES));
}

function range(count: number): number[] {
  return Array.from({ length: count }, (_, index) => index);
}

function sha256(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** `chunk 3`, `chunks 1, 4`, `chunks 0, 1, …, 9, … (N in all)`: the first indices of `total`. */
function describeIndices(indices: readonly number[], total: number): string {
  const listed = indices.slice(0, LISTED_MISSING).join(', ');
  return `chunk${total === 1 ? '' : 's'} ${listed}${total > LISTED_MISSING ? `, … (${total} in all)` : ''}`;
}
