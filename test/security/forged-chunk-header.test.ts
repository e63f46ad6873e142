/**
 * A forged chunked-value header (src/zk/chunked-value.ts) written by anyone who can write a plan's
 * nodes, e.g. `{"json":{"zkPlanChunked":1,"bytes":N,"chunks":N,"sha256":"…"}}` in an `arg-*` or
 * `result-*` node: every reader of stored values answers it with a coded error at once, never with
 * work in proportion to N. Readers: readValue itself, a worker loop (its task fails for good,
 * charged, and the loop runs on), getResult, the web view's /api/task, exportPlan (and the spec
 * record it reads), addTask on a finished producer. All on the in-memory ZooKeeper.
 *
 * The finding's own sizes (N = 1e8, 4e8) are read in a child process with a 128 MiB heap, where a
 * reader that allocates in proportion to N dies; in this process the same shape is forged with
 * N = 1e6 (enough to fail without the fix, without taking the test process down), next to
 * headers of 4e8 bytes that are self-consistent but over the reader's limit.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import superjson from 'superjson';
import { afterEach, describe, expect, it } from 'vitest';
import { rootContainer } from '../../src/di/container.js';
import { MalformedNodeError } from '../../src/errors/task-errors.js';
import { IncompleteValueError } from '../../src/errors/value-errors.js';
import { FunctionRegistry } from '../../src/exec/function-registry.js';
import { call } from '../../src/exec/task-spec.js';
import { ZkPlan } from '../../src/zk-plan.js';
import { encodeValue } from '../../src/serialization/codec.js';
import type { TaskFailure } from '../../src/store/failure-policy.js';
import { MemoryZooKeeper, type MemoryZkClient } from '../../src/testing/index.js';
import { startUiServer, type UiServer } from '../../src/ui/ui-server.js';
import { CHUNK_BYTES, readValue, writeValue } from '../../src/zk/chunked-value.js';
import { FAILED, SPEC_RECORD, childPath, keptResultPathFor } from '../../src/zk/layout.js';
import type { Zk } from '../../src/zk/zk.js';
import type { ZkPlanEvents } from '../../src/worker/worker-events.js';
import { FAST_BACKOFF, memoryProcess, type MemoryProcess } from '../support/memory-plan.js';

const PARENT = '/plans';
const ZEROS = '0'.repeat(64);
/** A reader answers a forged header within this (the unfixed one took ~26 s for N = 1e8). */
const PROMPT_MS = 200;

/** The header of a chunked value, as a forger writes it. */
function header(bytes: unknown, chunks: unknown, sha256: unknown = ZEROS): Buffer {
  return Buffer.from(superjson.stringify({ zkPlanChunked: 1, bytes, chunks, sha256 }), 'utf8');
}

/** Forged headers every reader must refuse with MalformedNodeError, from the header alone. */
const FORGED: ReadonlyArray<{ readonly name: string; readonly data: Buffer }> = [
  { name: "the finding's shape (bytes = chunks = N)", data: header(1e6, 1e6) },
  {
    name: 'a self-consistent header of 4e8 bytes (over the 16 MiB limit)',
    data: header(4e8, Math.ceil(4e8 / CHUNK_BYTES)),
  },
];

function chunkName(index: number): string {
  return `chunk-${String(index).padStart(10, '0')}`;
}

/**
 * `zk` that refuses to list children: a header a writer never makes must be refused from the
 * header alone. (An unfixed reader lists the children and then allocates one entry per chunk the
 * header claims: stopped at the listing, it fails this test instead of running out of memory.)
 */
function refusingListings(zk: Zk): Zk {
  return new Proxy(zk, {
    get(target, property, receiver) {
      if (property === 'tryGetChildren' || property === 'getChildren') {
        return async () => {
          throw new Error('the reader listed the chunks of a header it should have refused');
        };
      }
      const value: unknown = Reflect.get(target, property, receiver);
      return typeof value === 'function'
        ? (value as (...a: unknown[]) => unknown).bind(target)
        : value;
    },
  });
}

/** Runs `read`; what it threw (it must throw) and how long it took. */
async function timed(read: () => Promise<unknown>): Promise<{ error: unknown; ms: number }> {
  const started = performance.now();
  const error = await read().then(
    () => new Error('the read succeeded'),
    (caught: unknown) => caught,
  );
  return { error, ms: performance.now() - started };
}

const opened: MemoryProcess[] = [];
const servers: UiServer[] = [];

afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
  await Promise.all(opened.splice(0).map((proc) => proc.zkPlan.close()));
});

function open(
  server: MemoryZooKeeper,
  name: string,
  functions = new FunctionRegistry(),
): MemoryProcess {
  const proc = memoryProcess(server, name, functions);
  opened.push(proc);
  return proc;
}

async function client(): Promise<MemoryZkClient> {
  const zk = new MemoryZooKeeper().connect({ name: 'reader' });
  await zk.ensurePath('/v');
  return zk;
}

describe('readValue of a forged header', () => {
  it('refuses every header a writer never makes from the header alone: MalformedNodeError naming the node, no listing', async () => {
    const zk = await client();
    const cases: ReadonlyArray<readonly [string, Buffer, RegExp]> = [
      [
        'finding',
        header(4e8, 4e8),
        /chunks 400000000, but a value of 400000000 bytes is stored in 445 chunks/,
      ],
      ['finding-1e8', header(1e8, 1e8), /chunks 100000000/],
      [
        'more-chunks',
        header(2_000_000, 5),
        /chunks 5, but a value of 2000000 bytes is stored in 3 chunks/,
      ],
      ['fewer-chunks', header(2_000_000, 1), /stored in 3 chunks/],
      ['zero', header(0, 0), /bytes 0, expected a positive integer/],
      ['negative', header(-5, 1), /bytes -5/],
      ['fraction', header(1.5, 1), /bytes 1.5/],
      [
        'unsafe',
        header(2 ** 60, 2 ** 60 / CHUNK_BYTES),
        /bytes 1152921504606847000, expected a positive integer/,
      ],
      ['text', header('9', 1), /bytes "9"/],
      ['chunks-text', header(10, '1'), /chunks "1"/],
      ['sha', header(10, 1, 'nope'), /sha256 "nope"/],
      [
        'over-limit',
        header(4e8, 445),
        /says the value is 400000000 bytes, more than this reader's limit of 16777216 bytes/,
      ],
      [
        'max-safe',
        header(Number.MAX_SAFE_INTEGER, Math.ceil(Number.MAX_SAFE_INTEGER / CHUNK_BYTES)),
        /more than this reader's limit/,
      ],
    ];
    for (const [name, data, problem] of cases) {
      const path = `/v/${name}`;
      await zk.create(path, data);
      const { error, ms } = await timed(() => readValue(refusingListings(zk), path));
      expect(error, name).toBeInstanceOf(MalformedNodeError);
      expect(error, name).toMatchObject({
        code: 'MALFORMED_NODE',
        path,
        retryable: false,
        charged: true,
      });
      expect((error as Error).message, name).toMatch(problem);
      expect((error as Error).message, name).toContain(`Znode ${path} is malformed`);
      expect(ms, name).toBeLessThan(PROMPT_MS);
    }
  });

  it("dies of nothing at the finding's sizes: a reader with a 128 MiB heap answers N = 1e8 and 4e8 in milliseconds", () => {
    const script = fileURLToPath(new URL('./support/read-forged-value.ts', import.meta.url));
    const root = fileURLToPath(new URL('../..', import.meta.url));
    const headers = [
      '100000000:100000000',
      '400000000:400000000',
      `400000000:${Math.ceil(4e8 / CHUNK_BYTES)}`,
    ];
    const child = spawnSync(
      process.execPath,
      ['--max-old-space-size=128', '--import', 'tsx', script, ...headers],
      {
        cwd: root,
        encoding: 'utf8',
        timeout: 30_000,
      },
    );
    expect(child.status, child.stderr.slice(-600)).toBe(0);
    const outcomes = child.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { code: string; ms: number; heapGrowth: number });
    expect(outcomes).toHaveLength(headers.length);
    for (const outcome of outcomes) {
      expect(outcome.code).toBe('MALFORMED_NODE');
      expect(outcome.ms).toBeLessThan(PROMPT_MS);
      expect(outcome.heapGrowth).toBeLessThan(8 * 1024 * 1024);
    }
  });

  it('takes the limit a reader gives: a real value over it is refused before its chunks are read, under it read whole', async () => {
    const zk = await client();
    const encoded = encodeValue(
      'x'.repeat(2 * CHUNK_BYTES),
      'test',
      undefined,
      Number.POSITIVE_INFINITY,
    );
    await writeValue(zk, '/v/large', encoded);
    await expect(
      readValue(refusingListings(zk), '/v/large', { maxBytes: CHUNK_BYTES }),
    ).rejects.toThrow(
      new RegExp(
        `says the value is ${encoded.length} bytes, more than this reader's limit of ${CHUNK_BYTES} bytes`,
      ),
    );
    expect((await readValue(zk, '/v/large', { maxBytes: encoded.length }))?.equals(encoded)).toBe(
      true,
    );
    expect((await readValue(zk, '/v/large'))?.equals(encoded)).toBe(true);
    await expect(readValue(zk, '/v/large', { maxBytes: 0 })).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
    });
  });

  it('compares the listing before anything is allocated: a well-formed header of 9e15 bytes with no chunks is incomplete at once', async () => {
    const zk = await client();
    const bytes = 9e15;
    const chunks = Math.ceil(bytes / CHUNK_BYTES); // 10 000 000 000: more than an array can hold
    await zk.create('/v/huge', header(bytes, chunks));
    await zk.create(`/v/huge/${chunkName(1)}`, Buffer.alloc(CHUNK_BYTES));
    const { error, ms } = await timed(() =>
      readValue(zk, '/v/huge', { maxBytes: Number.MAX_SAFE_INTEGER }),
    );
    expect(error).toBeInstanceOf(IncompleteValueError);
    expect((error as Error).message).toContain(
      `chunks 0, 2, 3, 4, 5, 6, 7, 8, 9, 10, … (${chunks - 1} in all) of its ${chunks} chunks missing`,
    );
    expect(ms).toBeLessThan(PROMPT_MS);
  });

  it('keeps a writer that is still creating chunks (or crashed part-way) transient: IncompleteValueError, then the whole value', async () => {
    const zk = await client();
    const encoded = encodeValue(
      'y'.repeat(2 * CHUNK_BYTES + 10),
      'test',
      undefined,
      Number.POSITIVE_INFINITY,
    );
    await writeValue(zk, '/v/racing', encoded);
    const last = await zk.getData(`/v/racing/${chunkName(2)}`);
    await zk.delete(`/v/racing/${chunkName(2)}`);
    const error = await readValue(zk, '/v/racing').catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(IncompleteValueError);
    expect(error).toMatchObject({ code: 'INCOMPLETE_VALUE', path: '/v/racing', charged: false });
    expect((error as Error).message).toContain('chunk 2 of its 3 chunks missing');
    await zk.create(`/v/racing/${chunkName(2)}`, last.data);
    expect((await readValue(zk, '/v/racing'))?.equals(encoded)).toBe(true);
  });

  it('refuses chunks the header does not describe, under the same header node: a stray chunk-N, a wrong length, a wrong sha256', async () => {
    const zk = await client();
    const encoded = encodeValue(
      'z'.repeat(CHUNK_BYTES + 10),
      'test',
      undefined,
      Number.POSITIVE_INFINITY,
    );
    for (const name of ['stray', 'short', 'sha']) await writeValue(zk, `/v/${name}`, encoded);
    await zk.create(`/v/stray/${chunkName(7)}`, Buffer.from('extra'));
    await zk.delete(`/v/short/${chunkName(1)}`);
    await zk.create(`/v/short/${chunkName(1)}`, Buffer.from('short'));
    const second = (await zk.getData(`/v/sha/${chunkName(1)}`)).data as Buffer;
    await zk.setData(`/v/sha/${chunkName(1)}`, Buffer.alloc(second.length, 0x41));
    const expected: Record<string, RegExp> = {
      stray: /has a child chunk-0000000007, but its chunked-value header says it has 2 chunks/,
      short: /chunk 1 holds 5 bytes, where a value of \d+ bytes has \d+/,
      sha: /the sha256 of its chunks is [0-9a-f]{64}, the header says/,
    };
    for (const [name, problem] of Object.entries(expected)) {
      const error = await readValue(zk, `/v/${name}`).catch((caught: unknown) => caught);
      expect(error, name).toBeInstanceOf(MalformedNodeError);
      expect((error as Error).message, name).toMatch(problem);
    }
  });

  it('tells a node deleted and written again between its reads (transient) from a forged one', async () => {
    const server = new MemoryZooKeeper();
    const zk = server.connect({ name: 'reader' });
    const writer = server.connect({ name: 'writer' });
    await zk.ensurePath('/v');
    await writeValue(
      writer,
      '/v/value',
      encodeValue('a'.repeat(CHUNK_BYTES + 10), 'test', undefined, Number.POSITIVE_INFINITY),
    ); // 2 chunks
    const bigger = encodeValue(
      'b'.repeat(2 * CHUNK_BYTES + 10),
      'test',
      undefined,
      Number.POSITIVE_INFINITY,
    ); // 3 chunks
    let replaced = false;
    const hooked = new Proxy(zk, {
      get(target, property, receiver) {
        const value: unknown = Reflect.get(target, property, receiver);
        if (property !== 'tryGetData')
          return typeof value === 'function'
            ? (value as (...a: unknown[]) => unknown).bind(target)
            : value;
        return async (path: string) => {
          const read = await target.tryGetData(path);
          if (path === '/v/value' && !replaced) {
            replaced = true;
            await writer.deleteRecursive('/v/value');
            await writeValue(writer, '/v/value', bigger);
          }
          return read;
        };
      },
    });
    const error = await readValue(hooked, '/v/value').catch((caught: unknown) => caught);
    expect(replaced).toBe(true);
    expect(error).toBeInstanceOf(IncompleteValueError);
    expect((error as Error).message).toContain('deleted and written again while it was read');
    expect((await readValue(zk, '/v/value'))?.equals(bigger)).toBe(true);
  });
});

describe('a worker loop given a forged input', () => {
  function functions(): FunctionRegistry {
    return new FunctionRegistry()
      .register('value', (ctx) => ctx.params[0])
      .register('echo', (_ctx, ...inputs: unknown[]) => inputs[0]);
  }

  /** Collects a ZkPlan's events of one kind. */
  function record<K extends keyof ZkPlanEvents>(
    proc: MemoryProcess,
    name: K,
  ): ZkPlanEvents[K][0][] {
    const seen: ZkPlanEvents[K][0][] = [];
    (proc.zkPlan.on as (name: K, listener: (event: ZkPlanEvents[K][0]) => void) => unknown)(
      name,
      (event) => seen.push(event),
    );
    return seen;
  }

  it.each(FORGED)(
    'fails the task for good, charged once, and runs the other tasks of its plan and of other plans ($name)',
    async ({ data }) => {
      const server = new MemoryZooKeeper();
      const builder = open(server, 'builder', functions());
      const plan = await builder.zkPlan.createPlan(PARENT);
      const victim = await builder.zkPlan.addTask(plan, call('echo'), [], { keepResult: true });
      const forgedArg = childPath(victim, 'arg-0000000000');
      await builder.zk.create(forgedArg, data);
      const sibling = await builder.zkPlan.addTask(plan, call('value', 'sibling'), [], {
        keepResult: true,
      });
      const other = await builder.zkPlan.createPlan(PARENT);
      const elsewhere = await builder.zkPlan.addTask(other, call('value', 'elsewhere'), [], {
        keepResult: true,
      });
      await builder.zkPlan.markAsReady(plan);
      await builder.zkPlan.markAsReady(other);

      const worker = open(server, 'worker', functions());
      const failures = record(worker, 'task:failed');
      const errors = record(worker, 'worker:error');
      const started = performance.now();
      const pool = worker.zkPlan.startWorkers(PARENT, { backoff: FAST_BACKOFF, retention: false });
      try {
        await expect
          .poll(async () => (await builder.zk.exists(childPath(victim, FAILED))) !== undefined, {
            timeout: 5_000,
          })
          .toBe(true);
        expect(performance.now() - started).toBeLessThan(2_000);
        await expect
          .poll(async () => await builder.zkPlan.getResult(sibling).catch(() => undefined), {
            timeout: 5_000,
          })
          .toBe('sibling');
        await expect
          .poll(async () => await builder.zkPlan.getResult(elsewhere).catch(() => undefined), {
            timeout: 5_000,
          })
          .toBe('elsewhere');
      } finally {
        await pool.stop();
      }
      const failure = superjson.parse<TaskFailure>(
        (await builder.zk.getData(childPath(victim, FAILED))).data?.toString('utf8') ?? '',
      );
      expect(failure).toMatchObject({
        type: 'MalformedNodeError',
        code: 'MALFORMED_NODE',
        retryable: false,
        attempts: 1,
      });
      expect(failure.message).toContain(`Znode ${forgedArg} is malformed`);
      expect(failure.message).toMatch(/delete it with its chunk-\* children/);
      expect(failures.filter((event) => event.task === victim)).toEqual([
        expect.objectContaining({ charged: true, final: true, attempts: 1 }),
      ]);
      expect(errors).toEqual([]);
    },
  );

  it('waits, uncharged, for an input whose chunks are still being written, and runs once they are all there', async () => {
    const server = new MemoryZooKeeper();
    const builder = open(server, 'builder', functions());
    const plan = await builder.zkPlan.createPlan(PARENT);
    const task = await builder.zkPlan.addTask(plan, call('echo'), [], { keepResult: true });
    const arg = childPath(task, 'arg-0000000000');
    const value = 'w'.repeat(CHUNK_BYTES + 10);
    await writeValue(
      builder.zk,
      arg,
      encodeValue(value, 'test', undefined, Number.POSITIVE_INFINITY),
    );
    const last = await builder.zk.getData(childPath(arg, chunkName(1)));
    await builder.zk.delete(childPath(arg, chunkName(1))); // its writer has not created it yet
    await builder.zkPlan.markAsReady(plan);

    const worker = open(server, 'worker', functions());
    const failures = record(worker, 'task:failed');
    const pool = worker.zkPlan.startWorkers(PARENT, { backoff: FAST_BACKOFF, retention: false });
    try {
      await expect.poll(() => failures.length, { timeout: 5_000 }).toBeGreaterThan(0);
      expect(
        failures.every(
          (event) => !event.charged && !event.final && event.error instanceof IncompleteValueError,
        ),
      ).toBe(true);
      expect(await builder.zk.exists(childPath(task, FAILED))).toBeUndefined();
      await builder.zk.create(childPath(arg, chunkName(1)), last.data);
      await expect
        .poll(async () => await builder.zkPlan.getResult(task).catch(() => undefined), {
          timeout: 5_000,
        })
        .toBe(value);
    } finally {
      await pool.stop();
    }
  });

  it('reads inputs with its own maxResultBytes: a real input over it fails the task for good, a raised one reads it', async () => {
    const server = new MemoryZooKeeper();
    const builder = open(server, 'builder', functions());
    const value = 'v'.repeat(2 * CHUNK_BYTES);
    const plan = await builder.zkPlan.createPlan(PARENT);
    const task = await builder.zkPlan.addTask(plan, call('echo'), [], { keepResult: true });
    await writeValue(
      builder.zk,
      childPath(task, 'arg-0000000000'),
      encodeValue(value, 'test', undefined, Number.POSITIVE_INFINITY),
      {
        maxBytes: Number.MAX_SAFE_INTEGER,
      },
    );
    await builder.zkPlan.markAsReady(plan);

    const small = open(server, 'small', functions());
    const pool = small.zkPlan.startWorkers(PARENT, {
      backoff: FAST_BACKOFF,
      retention: false,
      maxResultBytes: CHUNK_BYTES,
    });
    try {
      await expect
        .poll(async () => (await builder.zk.exists(childPath(task, FAILED))) !== undefined, {
          timeout: 5_000,
        })
        .toBe(true);
    } finally {
      await pool.stop();
    }
    const failure = superjson.parse<TaskFailure>(
      (await builder.zk.getData(childPath(task, FAILED))).data?.toString('utf8') ?? '',
    );
    expect(failure).toMatchObject({ code: 'MALFORMED_NODE', retryable: false, attempts: 1 });
    expect(failure.message).toContain(`more than this reader's limit of ${CHUNK_BYTES} bytes`);

    await builder.zkPlan.control.retryFailed(plan);
    const large = open(server, 'large', functions());
    const second = large.zkPlan.startWorkers(PARENT, {
      backoff: FAST_BACKOFF,
      retention: false,
      maxResultBytes: 4 * CHUNK_BYTES,
    });
    try {
      await expect
        .poll(async () => await builder.zkPlan.getResult(task).catch(() => undefined), {
          timeout: 5_000,
        })
        .toBe(value);
    } finally {
      await second.stop();
    }
  });
});

describe('the other readers of stored values', () => {
  it.each(FORGED)(
    'getResult answers a forged kept result with MalformedNodeError at once ($name)',
    async ({ data }) => {
      const proc = open(new MemoryZooKeeper(), 'client');
      const plan = await proc.zkPlan.createPlan(PARENT);
      const task = childPath(plan, 'task-0000000007');
      await proc.zk.create(keptResultPathFor(task), data);
      const { error, ms } = await timed(() => proc.zkPlan.getResult(task));
      expect(error).toBeInstanceOf(MalformedNodeError);
      expect(error).toMatchObject({ path: keptResultPathFor(task) });
      expect(ms).toBeLessThan(PROMPT_MS);
    },
  );

  it("reads with the ZkPlan's maxResultBytes (ZkPlan.connect's option), which its workers take as their default", async () => {
    const server = new MemoryZooKeeper();
    const writer = open(server, 'writer');
    const plan = await writer.zkPlan.createPlan(PARENT);
    const task = childPath(plan, 'task-0000000003');
    const value = 'k'.repeat(2 * CHUNK_BYTES);
    await writeValue(
      writer.zk,
      keptResultPathFor(task),
      encodeValue(value, 'test', undefined, Number.POSITIVE_INFINITY),
    );
    expect(await writer.zkPlan.getResult(task)).toBe(value);

    const zk = server.connect({ name: 'limited' });
    const limited = new ZkPlan(zk, new FunctionRegistry(), {
      container: rootContainer.createChildContainer(),
      maxResultBytes: CHUNK_BYTES,
    });
    try {
      await expect(limited.getResult(task)).rejects.toThrow(
        new RegExp(`more than this reader's limit of ${CHUNK_BYTES} bytes`),
      );
    } finally {
      await limited.close();
    }
    expect(
      () =>
        new ZkPlan(server.connect({ name: 'bad' }), new FunctionRegistry(), {
          container: rootContainer.createChildContainer(),
          maxResultBytes: 0,
        }),
    ).toThrow(/maxResultBytes/);
  });

  it.each(FORGED)(
    'the web view answers /api/task on a forged kept result with a coded error, and goes on answering ($name)',
    async ({ data }) => {
      const proc = open(new MemoryZooKeeper(), 'view');
      // Without history, a task whose node is gone is shown as done, with its kept result read.
      const plan = await proc.zkPlan.createPlan(PARENT, { history: false });
      const task = childPath(plan, 'task-0000000004');
      await proc.zk.create(keptResultPathFor(task), data);
      const ui = await startUiServer({
        zkPlan: proc.zkPlan as unknown as ZkPlan,
        parent: PARENT,
        port: 0,
      });
      servers.push(ui);
      const started = performance.now();
      const response = await fetch(new URL(`/api/task?path=${encodeURIComponent(task)}`, ui.url));
      expect(performance.now() - started).toBeLessThan(1_000);
      expect(response.status).toBe(500);
      const body = (await response.json()) as { error: { code: string; message: string } };
      expect(body.error.code).toBe('MALFORMED_NODE');
      expect(body.error.message).toContain(`Znode ${keptResultPathFor(task)} is malformed`);
      const plans = await fetch(new URL('/api/plans', ui.url));
      expect(plans.status).toBe(200);
      expect(((await plans.json()) as { plan: string }[]).map((row) => row.plan)).toEqual([plan]);
    },
  );

  it.each(FORGED)(
    'exportPlan refuses a forged kept result, input or spec record at once ($name)',
    async ({ data }) => {
      const proc = open(new MemoryZooKeeper(), 'exporter');
      // A plan built with addTask (its spec is derived from the tasks): a forged kept result of a task.
      const derived = await proc.zkPlan.createPlan(PARENT);
      const task = await proc.zkPlan.addTask(derived, call('value', 1));
      await proc.zk.create(keptResultPathFor(task), data);
      // The same plan shape with a forged input a task holds.
      const holding = await proc.zkPlan.createPlan(PARENT);
      const holder = await proc.zkPlan.addTask(holding, call('value', 1));
      await proc.zk.create(childPath(holder, 'arg-0000000000'), data);
      // A plan whose spec record is forged.
      const specced = await proc.zkPlan.createPlan(PARENT);
      await proc.zk.create(childPath(specced, SPEC_RECORD), data);
      for (const [plan, path] of [
        [derived, keptResultPathFor(task)],
        [holding, childPath(holder, 'arg-0000000000')],
        [specced, childPath(specced, SPEC_RECORD)],
      ] as const) {
        const { error, ms } = await timed(() => proc.zkPlan.snapshots.export(plan));
        expect(error, path).toMatchObject({ path });
        expect(['MALFORMED_NODE', 'INCOMPLETE_VALUE'], path).toContain(
          (error as { code?: string }).code,
        );
        expect(ms, path).toBeLessThan(PROMPT_MS * 2);
      }
    },
  );

  it('a huge but well-formed forged spec record (read without a size limit) is incomplete at once, for exportPlan and rerunPlan', async () => {
    const proc = open(new MemoryZooKeeper(), 'exporter');
    const plan = await proc.zkPlan.createPlan(PARENT);
    const bytes = 9e15;
    await proc.zk.create(
      childPath(plan, SPEC_RECORD),
      header(bytes, Math.ceil(bytes / CHUNK_BYTES)),
    );
    for (const read of [
      () => proc.zkPlan.snapshots.export(plan),
      () => proc.zkPlan.snapshots.rerun(plan, { from: 'failed' }),
    ]) {
      const { error, ms } = await timed(read);
      expect(error).toBeInstanceOf(IncompleteValueError);
      expect(ms).toBeLessThan(PROMPT_MS);
    }
  });

  it.each(FORGED)(
    'addTask on a finished producer refuses its forged kept result ($name)',
    async ({ data }) => {
      const proc = open(new MemoryZooKeeper(), 'builder');
      const plan = await proc.zkPlan.createPlan(PARENT);
      const producer = childPath(plan, 'task-0000000009'); // completed and deleted; its kept result stays
      await proc.zk.create(keptResultPathFor(producer), data);
      const { error, ms } = await timed(() =>
        proc.zkPlan.addTask(plan, call('value', 2), [producer]),
      );
      expect(error).toBeInstanceOf(MalformedNodeError);
      expect(error).toMatchObject({ path: keptResultPathFor(producer) });
      expect(ms).toBeLessThan(PROMPT_MS);
    },
  );
});
