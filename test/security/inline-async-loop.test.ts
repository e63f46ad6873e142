/**
 * Inline code that never gives the event loop back (finding 6): vm2's own `timeout` covered only
 * the synchronous part of a run, so a loop after an `await`, in a `then` callback or behind a
 * timer froze the whole process for good, its task timeout, session heartbeat and stop signals
 * included. Inline code now runs in a worker thread that the main thread terminates. Each case
 * here spins in a different part of a run and must end in its time limit while an interval on
 * the main thread keeps ticking; no thread may be left behind.
 */
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SILENT_LOGGER } from '../../src/logs/task-log-types.js';
import { rootContainer as container } from '../../src/di/container.js';
import { TaskExecutionError, TaskTimeoutError } from '../../src/errors/task-errors.js';
import { ResultTooLargeError } from '../../src/errors/value-errors.js';
import { executeFunction, type ExecutionSettings } from '../../src/exec/execute-function.js';
import { FunctionRegistry } from '../../src/exec/function-registry.js';
import { inlineThreadStats, stopIdleInlineThreads } from '../../src/exec/inline-sandbox.js';
import { inline } from '../../src/exec/task-spec.js';
import { encodeValue } from '../../src/serialization/codec.js';
import { MemoryZooKeeper } from '../../src/testing/index.js';
import type { ZkPlanEvents } from '../../src/worker/worker-events.js';
import { FAST_BACKOFF, memoryProcess, pause, type MemoryProcess } from '../support/memory-plan.js';
import { expectRejects } from '../support/expect-error.js';

const PLAN = '/plans/plan-0000000001';
const TASK = `${PLAN}/task-0000000001`;
/** The time limit of the cases: long enough that a blocked main thread shows as one long gap between ticks. */
const LIMIT_MS = 1_000;
/** How late after its limit a run may end: terminating a thread takes milliseconds, the rest is a loaded machine. */
const SLACK_MS = 2_000;
/** The longest gap between two ticks of a 10 ms interval that still counts as a free main thread (a loaded machine, GC). */
const MAX_GAP_MS = 400;

/** An interval on the main thread: how many times it fired, and the longest gap between two firings. */
function watchMainLoop(): { stop: () => { ticks: number; maxGapMs: number } } {
  let ticks = 0;
  let last = performance.now();
  let maxGapMs = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    maxGapMs = Math.max(maxGapMs, now - last);
    last = now;
    ticks += 1;
  }, 10);
  return {
    stop: () => {
      clearInterval(timer);
      maxGapMs = Math.max(maxGapMs, performance.now() - last);
      return { ticks, maxGapMs };
    },
  };
}

function ctx(
  signal: AbortSignal = new AbortController().signal,
): Parameters<typeof executeFunction>[1] {
  return {
    container: container.createChildContainer(),
    task: TASK,
    plan: PLAN,
    workerId: 'host:1:1',
    signal,
    log: SILENT_LOGGER,
    attempt: 1,
    // Inline functions never see ctx.spawn nor ctx.continueWith: a call would be a bug in the test.
    spawn: () => Promise.reject(new Error('ctx.spawn is not part of this test')),
    continueWith: () => {
      throw new Error('ctx.continueWith is not part of this test');
    },
    notYet: () => {
      throw new Error('ctx.notYet is not part of this test');
    },
  };
}

function settings(inlineTimeoutMs: number): ExecutionSettings {
  return {
    functions: new FunctionRegistry(),
    allowInline: true,
    inlineTimeoutMs,
    allowShell: false,
    shellKillGraceMs: 1_000,
    maxResultBytes: 16 * 1024 * 1024,
  };
}

beforeEach(async () => {
  // A warm thread, so the first case does not pay for starting one (it would not count against its limit anyway).
  expect(await executeFunction({ source: '() => "warm"' }, ctx(), [], settings(LIMIT_MS))).toBe(
    'warm',
  );
});

afterEach(() => {
  // Every thread still alive (not exited) is an idle one in the pool: those of runs that timed out or were aborted are gone.
  expect(inlineThreadStats().busy).toBe(0);
});

afterAll(async () => {
  await stopIdleInlineThreads();
  expect(inlineThreadStats()).toMatchObject({ live: 0, busy: 0, idle: 0 });
});

describe('inline code that never yields ends in its time limit, and the main thread runs on meanwhile', () => {
  it.each([
    ['a synchronous loop', '() => { for (;;) {} }'],
    ['a loop after an await', 'async () => { await null; for (;;) {} }'],
    ['a loop in a then callback', '() => Promise.resolve().then(() => { for (;;) {} })'],
    ['an endless chain of awaits (no single step blocks)', 'async () => { for (;;) await null; }'],
    [
      'an endless chain of then callbacks',
      '() => { const spin = () => Promise.resolve().then(spin); return spin(); }',
    ],
    [
      'a loop behind a timer (Atomics.waitAsync, the one timer the sandbox has)',
      'async () => { await Atomics.waitAsync(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20).value; for (;;) {} }',
    ],
    [
      'a blocking wait (Atomics.wait)',
      '() => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0)',
    ],
    ['a promise that never settles', '() => new Promise(() => {})'],
  ])('%s: TaskExecutionError "timed out" after inlineTimeoutMs', async (_name, source) => {
    const watch = watchMainLoop();
    const started = performance.now();
    const error = await expectRejects(
      () => executeFunction({ source }, ctx(), [], settings(LIMIT_MS)),
      TaskExecutionError,
    );
    const elapsed = performance.now() - started;
    const { ticks, maxGapMs } = watch.stop();
    expect(error.code).toBe('TASK_FAILED');
    expect(error.path).toBe(TASK);
    expect(error.message).toMatch(/timed out after 1000 ms/);
    expect(elapsed).toBeGreaterThanOrEqual(LIMIT_MS - 20);
    expect(elapsed).toBeLessThan(LIMIT_MS + SLACK_MS);
    expect(maxGapMs).toBeLessThan(MAX_GAP_MS);
    expect(ticks).toBeGreaterThan(LIMIT_MS / 10 / 4);
    expect(inlineThreadStats().busy).toBe(0);
  });

  it('the sandbox has no setTimeout, setInterval, setImmediate or queueMicrotask to schedule a loop with', async () => {
    const source =
      '() => [typeof setTimeout, typeof setInterval, typeof setImmediate, typeof queueMicrotask, typeof process, typeof require]';
    expect(await executeFunction({ source }, ctx(), [], settings(LIMIT_MS))).toEqual(
      Array(6).fill('undefined'),
    );
  });

  it('an aborted signal (the task timeout, a stop) ends a spinning run at once with its reason, and terminates the thread', async () => {
    const abort = new AbortController();
    const watch = watchMainLoop();
    const run = executeFunction(
      { source: 'async () => { await null; for (;;) {} }' },
      ctx(abort.signal),
      [],
      settings(60_000),
    );
    await pause(300);
    expect(inlineThreadStats().busy).toBe(1);
    const reason = new TaskTimeoutError(TASK, 300);
    const started = performance.now();
    abort.abort(reason);
    await expect(run).rejects.toBe(reason);
    expect(performance.now() - started).toBeLessThan(SLACK_MS);
    expect(watch.stop().maxGapMs).toBeLessThan(MAX_GAP_MS);
    expect(inlineThreadStats().busy).toBe(0);
  });

  it('a run whose signal is aborted already does not start', async () => {
    const abort = new AbortController();
    const reason = new Error('stopped before it started');
    abort.abort(reason);
    const before = inlineThreadStats().jobs;
    await expect(
      executeFunction({ source: '() => 1' }, ctx(abort.signal), [], settings(LIMIT_MS)),
    ).rejects.toBe(reason);
    expect(inlineThreadStats().jobs).toBe(before);
  });

  it('a thread left spinning by code that returned first is not given the next run: that run still succeeds', async () => {
    // Returns at once, and leaves a loop behind that starts a few microtasks later, in the thread it ran in.
    const leftover =
      '() => { (async () => { for (let i = 0; i < 5; i++) await null; for (;;) {} })(); return "returned"; }';
    expect(await executeFunction({ source: leftover }, ctx(), [], settings(LIMIT_MS))).toBe(
      'returned',
    );
    const started = performance.now();
    expect(
      await executeFunction({ source: '(ctx, x) => x + 1' }, ctx(), [41], settings(60_000)),
    ).toBe(42);
    expect(performance.now() - started).toBeLessThan(5_000);
  });
});

describe('what comes back from the thread', () => {
  it('errors thrown inside come back as TaskExecutionError with a readable message, name and code', async () => {
    const typeError = await expectRejects(
      () =>
        executeFunction(
          { source: 'async () => { await null; throw new TypeError("inline broke later"); }' },
          ctx(),
          [],
          settings(LIMIT_MS),
        ),
      TaskExecutionError,
    );
    expect(typeError.message).toBe(`Task ${TASK} failed: inline broke later`);
    expect(typeError.cause).toBeInstanceOf(Error);
    expect((typeError.cause as Error).name).toBe('TypeError');
    const coded = await expectRejects(
      () =>
        executeFunction(
          {
            source:
              '() => { throw Object.assign(new Error("no such customer"), { code: "NO_SUCH_CUSTOMER" }); }',
          },
          ctx(),
          [],
          settings(LIMIT_MS),
        ),
      TaskExecutionError,
    );
    expect((coded.cause as Error & { code?: string }).code).toBe('NO_SUCH_CUSTOMER');
    const plain = await expectRejects(
      () =>
        executeFunction(
          { source: '() => { throw { status: 503, reason: "unavailable" }; }' },
          ctx(),
          [],
          settings(LIMIT_MS),
        ),
      TaskExecutionError,
    );
    expect(plain.message).toContain('503');
    expect(plain.message).toContain('unavailable');
    expect(plain.cause).toEqual({ status: 503, reason: 'unavailable' });
  });

  it('a result over maxResultBytes fails with RESULT_TOO_LARGE, checked in the thread', async () => {
    const source = '() => "x".repeat(2048)';
    const bytes = encodeValue('x'.repeat(2048), 'result', TASK, Number.POSITIVE_INFINITY).length;
    const error = await executeFunction({ source }, ctx(), [], {
      ...settings(LIMIT_MS),
      maxResultBytes: bytes - 1,
    }).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(ResultTooLargeError);
    expect(error).toMatchObject({
      code: 'RESULT_TOO_LARGE',
      bytes,
      limitBytes: bytes - 1,
      path: `${TASK}/result`,
    });
    expect(
      await executeFunction({ source }, ctx(), [], {
        ...settings(LIMIT_MS),
        maxResultBytes: bytes,
      }),
    ).toHaveLength(2048);
  });

  it('a result that cannot be stored fails with UNSERIALIZABLE_VALUE, naming where', async () => {
    const error = await executeFunction(
      { source: '() => ({ nested: [1, () => 2] })' },
      ctx(),
      [],
      settings(LIMIT_MS),
    ).catch((thrown: unknown) => thrown);
    expect(error).toMatchObject({ code: 'UNSERIALIZABLE_VALUE', path: TASK });
    expect((error as Error).message).toContain(
      `The result of task ${TASK}.nested[1] is a function`,
    );
  });

  it('inputs and results keep their superjson types across the thread (Map, Set, Date, BigInt, RegExp, URL, undefined)', async () => {
    const input = new Map<string, unknown>([
      ['when', new Date(Date.UTC(2020, 0, 2))],
      ['tags', new Set(['a'])],
      ['big', 10n ** 20n],
      ['re', /a+/gi],
      ['url', new URL('https://example.com/a?b=1')],
      ['none', undefined],
    ]);
    const result = await executeFunction(
      {
        source:
          '(ctx, m) => ({ same: m, kinds: [...m.values()].map((v) => Object.prototype.toString.call(v)) })',
      },
      ctx(),
      [input],
      settings(LIMIT_MS),
    );
    expect(result).toEqual({
      same: input,
      kinds: [
        '[object Date]',
        '[object Set]',
        '[object BigInt]',
        '[object RegExp]',
        '[object URL]',
        '[object Undefined]',
      ],
    });
  });
});

describe('a worker running a spinning inline task', () => {
  const opened: MemoryProcess[] = [];
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((proc) => proc.zkPlan.close()));
  });

  type Failed = ZkPlanEvents['task:failed'][0];

  it('fails it with TaskTimeoutError (charged) at the task timeout, then runs the next task; stop() is prompt', async () => {
    const proc = memoryProcess(new MemoryZooKeeper(), 'p');
    opened.push(proc);
    const plan = await proc.zkPlan.createPlan('/plans', { maxAttempts: 1 });
    const spin = await proc.zkPlan.addTask(
      plan,
      inline(async () => {
        await null;
        for (;;);
      }),
      [],
      { timeoutMs: LIMIT_MS },
    );
    await proc.zkPlan.markAsReady(plan);
    const failures: Failed[] = [];
    proc.zkPlan.on('task:failed', (event) => failures.push(event));
    const watch = watchMainLoop();
    const started = performance.now();
    const pool = proc.zkPlan.startWorkers('/plans', {
      count: 1,
      allowInline: true,
      inlineTimeoutMs: 60_000,
      backoff: FAST_BACKOFF,
    });
    while (failures.length === 0 && performance.now() - started < LIMIT_MS + SLACK_MS + 5_000)
      await pause(10);
    const elapsed = performance.now() - started;
    expect(failures).toHaveLength(1);
    const [failure] = failures as [Failed];
    expect(failure.task).toBe(spin);
    expect(failure.error).toBeInstanceOf(TaskTimeoutError);
    expect(failure.charged).toBe(true);
    expect(failure.final).toBe(true);
    expect(elapsed).toBeLessThan(LIMIT_MS + SLACK_MS);
    expect(watch.stop().maxGapMs).toBeLessThan(MAX_GAP_MS);
    // The same loop takes the next task.
    const next = await proc.zkPlan.createPlan('/plans');
    const healthy = await proc.zkPlan.addTask(
      next,
      inline((_ctx: unknown, ...inputs: never[]) => inputs.length + 1),
      [],
      { keepResult: true },
    );
    await proc.zkPlan.markAsReady(next);
    await proc.zkPlan.waitForCompletion(next, { timeoutMs: 10_000 });
    expect(await proc.zkPlan.getResult(healthy)).toBe(1);
    const stopping = performance.now();
    await pool.stop({ drainTimeoutMs: 0 });
    expect(performance.now() - stopping).toBeLessThan(SLACK_MS);
  });

  it('stop() while an inline loop spins (no task timeout): the drain timeout ends it, uncharged, and its thread is gone', async () => {
    const proc = memoryProcess(new MemoryZooKeeper(), 'p');
    opened.push(proc);
    const plan = await proc.zkPlan.createPlan('/plans');
    await proc.zkPlan.addTask(
      plan,
      inline(() =>
        Promise.resolve().then(() => {
          for (;;);
        }),
      ),
    );
    await proc.zkPlan.markAsReady(plan);
    const failures: Failed[] = [];
    proc.zkPlan.on('task:failed', (event) => failures.push(event));
    const claimed = new Promise<void>((resolve) =>
      proc.zkPlan.once('task:claimed', () => resolve()),
    );
    const pool = proc.zkPlan.startWorkers('/plans', {
      count: 1,
      allowInline: true,
      inlineTimeoutMs: 60_000,
      backoff: FAST_BACKOFF,
    });
    await claimed;
    await pause(300); // spinning by now
    expect(inlineThreadStats().busy).toBe(1);
    const watch = watchMainLoop();
    const stopping = performance.now();
    await pool.stop({ drainTimeoutMs: 200 });
    expect(performance.now() - stopping).toBeLessThan(200 + SLACK_MS);
    expect(watch.stop().maxGapMs).toBeLessThan(MAX_GAP_MS);
    expect(failures.map(({ charged }) => charged)).toEqual([false]);
    expect(inlineThreadStats().busy).toBe(0);
  });
});
