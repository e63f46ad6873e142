import { createHash, randomBytes } from 'node:crypto';
import superjson from 'superjson';
import { describe, expect, it } from 'vitest';
import { IncompleteValueError, ResultTooLargeError } from '../src/errors/value-errors.js';
import { ZkError } from '../src/errors/zk-error.js';
import { encodeValue } from '../src/serialization/codec.js';
import {
  CHUNK_BYTES,
  deleteValue,
  readValue,
  writeValue,
  writeValueIfAbsent,
} from '../src/zk/chunked-value.js';
import { DEFAULTS } from '../src/config/defaults.js';
import type { ZkClient } from '../src/zk/zk-client.js';
import { useZooKeeper } from './support/zk-test-env.js';

const env = useZooKeeper('chunked-value');

const MiB = 1024 * 1024;
/** `superjson.stringify('')`: what a string costs besides its characters (base64 needs no JSON escaping). */
const STRING_OVERHEAD = Buffer.byteLength(superjson.stringify(''));

/** Superjson text of a random base64 string, exactly `bytes` long. */
function encodedOfSize(bytes: number): Buffer {
  const text = randomBytes(Math.ceil(((bytes - STRING_OVERHEAD) * 3) / 4) + 3)
    .toString('base64')
    .slice(0, bytes - STRING_OVERHEAD);
  const encoded = Buffer.from(superjson.stringify(text), 'utf8');
  expect(encoded.length).toBe(bytes);
  return encoded;
}

function chunkName(index: number): string {
  return `chunk-${String(index).padStart(10, '0')}`;
}

async function childrenOf(zk: ZkClient, path: string): Promise<string[]> {
  return ((await zk.tryGetChildren(path))?.children ?? []).sort();
}

async function roundTrip(
  zk: ZkClient,
  path: string,
  encoded: Buffer,
): Promise<{ writeMs: number; readMs: number }> {
  const writeStarted = performance.now();
  expect(await writeValue(zk, path, encoded)).toBe('created');
  const writeMs = performance.now() - writeStarted;

  const chunks = Math.ceil(encoded.length / CHUNK_BYTES);
  expect(await childrenOf(zk, path)).toEqual(
    Array.from({ length: chunks }, (_, index) => chunkName(index)),
  );
  const header = superjson.parse((await zk.getData(path)).data?.toString('utf8') ?? '');
  expect(header).toEqual({
    zkPlanChunked: 1,
    bytes: encoded.length,
    chunks,
    sha256: createHash('sha256').update(encoded).digest('hex'),
  });

  const readStarted = performance.now();
  const read = await readValue(zk, path);
  const readMs = performance.now() - readStarted;
  expect(read?.equals(encoded)).toBe(true);
  return { writeMs, readMs };
}

describe('chunked storage of large values', () => {
  it('stores a value that fits in one node verbatim, and reads it back', async () => {
    const zk = await env.client();
    const root = env.root();
    await zk.ensurePath(root);
    const encoded = encodeValue({ total: 3, at: new Date(0), tags: new Set(['a']) }, 'test value');
    expect(await writeValue(zk, `${root}/small`, encoded)).toBe('created');
    expect((await zk.getData(`${root}/small`)).data?.equals(encoded)).toBe(true);
    expect(await childrenOf(zk, `${root}/small`)).toEqual([]);
    expect((await readValue(zk, `${root}/small`))?.equals(encoded)).toBe(true);
    expect(await writeValue(zk, `${root}/small`, encodeValue(4, 'other'))).toBe('existed');
    expect((await readValue(zk, `${root}/small`))?.equals(encoded)).toBe(true);

    // Exactly CHUNK_BYTES still fits in one node.
    const edge = encodedOfSize(CHUNK_BYTES);
    expect(await writeValue(zk, `${root}/edge`, edge)).toBe('created');
    expect((await zk.getData(`${root}/edge`)).data?.equals(edge)).toBe(true);
    expect(await childrenOf(zk, `${root}/edge`)).toEqual([]);

    // A plain value of another tool, even one that is not superjson, is returned as it is.
    await zk.create(`${root}/foreign`, Buffer.from('not json'));
    expect((await readValue(zk, `${root}/foreign`))?.toString()).toBe('not json');
    expect(await readValue(zk, `${root}/absent`)).toBeUndefined();
  });

  it('round-trips 5 MiB and 16 MiB values byte-exact in chunks', async () => {
    const zk = await env.client();
    const root = env.root();
    await zk.ensurePath(root);
    await roundTrip(zk, `${root}/five`, encodedOfSize(5 * MiB));
    const sixteen = encodedOfSize(DEFAULTS.maxResultBytes); // the limit itself is allowed
    const { writeMs, readMs } = await roundTrip(zk, `${root}/sixteen`, sixteen);
    console.log(
      `16 MiB value (${Math.ceil(sixteen.length / CHUNK_BYTES)} chunks): write ${writeMs.toFixed(0)} ms, read ${readMs.toFixed(0)} ms`,
    );
  });

  it('refuses a value over the limit before writing anything, and honours a custom maxBytes', async () => {
    const zk = await env.client();
    const root = env.root();
    await zk.ensurePath(root);
    const tooLarge = Buffer.alloc(DEFAULTS.maxResultBytes + 1, 0x61);
    const error = await writeValue(zk, `${root}/huge`, tooLarge).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ResultTooLargeError);
    expect(error).toMatchObject({
      code: 'RESULT_TOO_LARGE',
      bytes: DEFAULTS.maxResultBytes + 1,
      limitBytes: DEFAULTS.maxResultBytes,
      path: `${root}/huge`,
    });
    expect((error as Error).message).toContain('maxResultBytes');
    await expect(writeValueIfAbsent(zk, `${root}/huge`, tooLarge)).rejects.toBeInstanceOf(
      ResultTooLargeError,
    );
    expect(await zk.exists(`${root}/huge`)).toBeUndefined();

    const twoMiB = encodedOfSize(2 * MiB);
    await expect(writeValue(zk, `${root}/custom`, twoMiB, { maxBytes: MiB })).rejects.toMatchObject(
      { code: 'RESULT_TOO_LARGE', limitBytes: MiB },
    );
    await expect(
      writeValue(zk, `${root}/custom`, encodeValue('x'.repeat(100), 'small'), { maxBytes: 50 }),
    ).rejects.toBeInstanceOf(ResultTooLargeError);
    expect(await zk.exists(`${root}/custom`)).toBeUndefined();
    expect(await writeValue(zk, `${root}/custom`, twoMiB, { maxBytes: 2 * MiB })).toBe('created');
    expect((await readValue(zk, `${root}/custom`))?.equals(twoMiB)).toBe(true);
    await expect(writeValue(zk, `${root}/bad`, twoMiB, { maxBytes: -1 })).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
    });
  });

  it('reports a header with a missing chunk as incomplete; writeValueIfAbsent completes it', async () => {
    const zk = await env.client();
    const root = env.root();
    await zk.ensurePath(root);
    const path = `${root}/value`;
    const encoded = encodedOfSize(2 * CHUNK_BYTES + 1234);
    await writeValue(zk, path, encoded);
    await zk.delete(`${path}/${chunkName(1)}`); // as if the writer crashed before creating it

    const error = await readValue(zk, path).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(IncompleteValueError);
    expect(error).toMatchObject({ code: 'INCOMPLETE_VALUE', path });
    expect((error as Error).message).toContain('chunk 1 of its 3 chunks missing');
    expect(await writeValue(zk, path, encoded)).toBe('existed'); // writeValue never completes: its bytes may differ

    await writeValueIfAbsent(zk, path, encoded);
    expect(await childrenOf(zk, path)).toEqual([chunkName(0), chunkName(1), chunkName(2)]);
    expect((await readValue(zk, path))?.equals(encoded)).toBe(true);
    await writeValueIfAbsent(zk, path, encoded); // nothing left to do
    // Other bytes at an existing path are left alone.
    await writeValueIfAbsent(zk, path, encodedOfSize(2 * CHUNK_BYTES + 1234));
    expect((await readValue(zk, path))?.equals(encoded)).toBe(true);

    // A chunk with the right length but other bytes fails the sha256 check; the owner deletes and rewrites.
    await zk.setData(`${path}/${chunkName(2)}`, Buffer.alloc(1234, 0x41));
    await expect(readValue(zk, path)).rejects.toThrow(/sha256/);
    await deleteValue(zk, path);
    expect(await writeValue(zk, path, encoded)).toBe('created');
    expect((await readValue(zk, path))?.equals(encoded)).toBe(true);
  });

  it('stores a user value that looks like a header in chunked form, so it round-trips', async () => {
    const zk = await env.client();
    const root = env.root();
    await zk.ensurePath(root);
    const lookalike = encodeValue(
      { zkPlanChunked: 1, bytes: 3, chunks: 1, sha256: 'a'.repeat(64) },
      'lookalike',
    );
    expect(await writeValue(zk, `${root}/lookalike`, lookalike)).toBe('created');
    expect(await childrenOf(zk, `${root}/lookalike`)).toEqual([chunkName(0)]);
    expect((await zk.getData(`${root}/lookalike`)).data?.equals(lookalike)).toBe(false);
    expect((await readValue(zk, `${root}/lookalike`))?.equals(lookalike)).toBe(true);
    await writeValueIfAbsent(zk, `${root}/lookalike-arg`, lookalike);
    expect((await readValue(zk, `${root}/lookalike-arg`))?.equals(lookalike)).toBe(true);

    // One key more (or zkPlanChunked ≠ 1) is not a header: stored and read verbatim.
    for (const [name, value] of [
      ['extra', { zkPlanChunked: 1, bytes: 3, chunks: 1, sha256: 'a'.repeat(64), note: 'mine' }],
      ['two', { zkPlanChunked: 2, bytes: 3, chunks: 1, sha256: 'a'.repeat(64) }],
    ] as const) {
      const encoded = encodeValue(value, name);
      await writeValue(zk, `${root}/${name}`, encoded);
      expect((await zk.getData(`${root}/${name}`)).data?.equals(encoded)).toBe(true);
      expect((await readValue(zk, `${root}/${name}`))?.equals(encoded)).toBe(true);
    }
  });

  it('deletes a value with its chunks, idempotently, and one with an unexpected child', async () => {
    const zk = await env.client();
    const root = env.root();
    await zk.ensurePath(root);
    await writeValue(zk, `${root}/large`, encodedOfSize(3 * MiB));
    await writeValue(zk, `${root}/small`, encodeValue('small', 'small'));
    await deleteValue(zk, `${root}/large`);
    await deleteValue(zk, `${root}/small`);
    expect(await childrenOf(zk, root)).toEqual([]);
    await deleteValue(zk, `${root}/large`);
    await deleteValue(zk, `${root}/never-written`);
    expect(await readValue(zk, `${root}/large`)).toBeUndefined();

    await writeValue(zk, `${root}/odd`, encodedOfSize(CHUNK_BYTES + 1));
    await zk.create(`${root}/odd/stranger`);
    await zk.create(`${root}/odd/stranger/deeper`);
    await deleteValue(zk, `${root}/odd`);
    expect(await childrenOf(zk, root)).toEqual([]);
  });

  it('passes the fence through: writes and deletes guarded by a session that is not current fail', async () => {
    const zk = await env.client();
    const root = env.root();
    await zk.ensurePath(root);
    const stale = { ...zk.session, generation: zk.session.generation - 1 };
    const large = encodedOfSize(CHUNK_BYTES + 10);
    const small = encodeValue(1, 'small');

    for (const encoded of [small, large]) {
      await expect(
        writeValue(zk, `${root}/fenced`, encoded, { fence: stale }),
      ).rejects.toMatchObject({ code: 'SESSION_EXPIRED' });
      await expect(
        writeValueIfAbsent(zk, `${root}/fenced`, encoded, { fence: stale }),
      ).rejects.toBeInstanceOf(ZkError);
      expect(await zk.exists(`${root}/fenced`)).toBeUndefined();
    }

    expect(await writeValue(zk, `${root}/current`, large, { fence: zk.session })).toBe('created');
    await expect(deleteValue(zk, `${root}/current`, { fence: stale })).rejects.toMatchObject({
      code: 'SESSION_EXPIRED',
    });
    expect((await readValue(zk, `${root}/current`))?.equals(large)).toBe(true);
    await deleteValue(zk, `${root}/current`, { fence: zk.session });
    expect(await zk.exists(`${root}/current`)).toBeUndefined();
  });
});
