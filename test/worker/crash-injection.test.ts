/**
 * Crash injection over the ZooKeeper seam, in memory: a process (a client and the ZkPlan on it)
 * dies right before its N-th write reaches the server (`client.crash()`: nothing it sent later is
 * applied or answered; then the server expires its session, so its ephemeral owner and builder
 * nodes go), for N = 1, 2, … until the operation completes without a crash. After each crash a
 * second process (a new client, a new ZkPlan with a pool) finishes the plan, and the outcome must
 * be the one of a single run: the right results (or the right failed task), each dependent run
 * once with its producers' stored results, no task run after its `failed` node existed, and
 * nothing left that keeps the plan open. integ/crash-injection.integ.test.ts does the same for one
 * operation against a real server.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { PlanOptions } from '../../src/config/plan-options.js';
import { PlanFailedError } from '../../src/errors/plan-errors.js';
import { PermanentError } from '../../src/errors/task-errors.js';
import { FunctionRegistry } from '../../src/exec/function-registry.js';
import type { TaskContext } from '../../src/exec/task-context.js';
import { call } from '../../src/exec/task-spec.js';
import type { TaskToAdd } from '../../src/config/task-options.js';
import { MemoryZooKeeper } from '../../src/testing/index.js';
import type { WorkerPool } from '../../src/worker/worker-pool.js';
import { FAST_BACKOFF, memoryProcess, pause, type MemoryProcess } from '../support/memory-plan.js';
import { CrashScheduler, Victim, WRITE_OPS, type CrashPoint } from '../support/crash-scheduler.js';

const PARENT = '/crash';
/** A result larger than one znode (CHUNK_BYTES): stored, kept and handed on in chunks. */
const BIG_BYTES = 1_000_000;
/** Safety net: no operation here has anywhere near this many writes. */
const MAX_CRASH_POINTS = 200;
/** How long background writes of a finished operation (a retry's re-index, a release) get to land. */
const SETTLE_MS = 25;
/** How far Date.now runs ahead of the real clock (see finishPlan). */
let clockOffsetMs = 0;

/** One run of a task function. */
interface Run {
  readonly process: string;
  readonly task: string;
  readonly label: string;
  readonly inputs: readonly string[];
  /** What it returned (shown), undefined when it threw or never returned. */
  output: string | undefined;
}

/** A write the server applied. */
interface Write {
  readonly client: string;
  readonly op: string;
  readonly path: string;
  readonly ok: boolean;
  /** For creates of a `result` node: how many chunks it announces (0 for a plain value). */
  readonly chunks?: number;
}

/** A big value as functions see it. */
interface BigValue {
  readonly tag: string;
  readonly blob: string;
}

function show(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'object' && value !== null && 'tag' in value)
    return String((value as BigValue).tag);
  return JSON.stringify(value);
}

/** A server with one crash scheduler, and what every process's task functions did on it. */
class World {
  readonly scheduler = new CrashScheduler();
  readonly server = new MemoryZooKeeper({ scheduler: this.scheduler });
  readonly runs: Run[] = [];
  readonly writes: Write[] = [];
  readonly violations: string[] = [];
  /** Functions left hanging by a process that ignores its signal; resolved by `releaseHanging`. */
  private readonly hanging: (() => void)[] = [];
  /** Resolved when a hanging function has started. */
  private started: () => void = () => undefined;
  readonly hangingStarted = new Promise<void>((resolve) => {
    this.started = resolve;
  });

  constructor() {
    this.server.onApplied = (event) => {
      if (!WRITE_OPS.has(event.op)) return;
      const path = event.createdPath ?? event.path;
      const chunks =
        event.op === 'create' && event.ok && path.endsWith('/result')
          ? chunksAnnounced(event.data)
          : undefined;
      this.writes.push({
        client: event.clientName,
        op: event.op,
        path,
        ok: event.ok,
        ...(chunks === undefined ? {} : { chunks }),
      });
    };
  }

  process(name: string): MemoryProcess {
    return memoryProcess(this.server, name, this.functions(name));
  }

  /** A process that crashes right before its `crashAt`-th write. */
  doomed(name: string, crashAt: number): { readonly proc: MemoryProcess; readonly victim: Victim } {
    const proc = this.process(name);
    const victim = new Victim(this.server, proc.zk, crashAt);
    this.scheduler.victim = victim;
    return { proc, victim };
  }

  runsOf(task: string, process?: string): Run[] {
    return this.runs.filter(
      (run) => run.task === task && (process === undefined || run.process === process),
    );
  }

  /** True when `client` stored the task's whole result (a plain node, or a header and all its chunks). */
  storedResult(client: string, task: string): boolean {
    const mine = this.writes.filter(
      (write) => write.client === client && write.ok && write.op === 'create',
    );
    const header = mine.find((write) => write.path === `${task}/result`);
    if (header === undefined) return false;
    const chunks = header.chunks ?? 0;
    return Array.from(
      { length: chunks },
      (_, index) => `${task}/result/chunk-${String(index).padStart(10, '0')}`,
    ).every((chunk) => mine.some((write) => write.path === chunk));
  }

  /** True when `client` created `path`. */
  created(client: string, path: string): boolean {
    return this.writes.some(
      (write) =>
        write.client === client && write.ok && write.op === 'create' && write.path === path,
    );
  }

  releaseHanging(): void {
    for (const release of this.hanging.splice(0)) release();
  }

  private begin(process: string, ctx: TaskContext<unknown[]>, inputs: readonly unknown[]): Run {
    // A task failed for good must never run again: its `failed` node is looked at as the function starts.
    if (this.server.exists(`${ctx.task}/failed`))
      this.violations.push(`${ctx.task} ran in ${process} although its failed node existed`);
    for (const input of inputs) {
      if (
        typeof input === 'object' &&
        input !== null &&
        (input as BigValue).blob.length !== BIG_BYTES
      )
        this.violations.push(`${ctx.task} got a truncated big input`);
    }
    const run: Run = {
      process,
      task: ctx.task,
      label: String(ctx.params[0]),
      inputs: inputs.map(show),
      output: undefined,
    };
    this.runs.push(run);
    return run;
  }

  private output(run: Run): string {
    const n = this.runsOf(run.task).indexOf(run) + 1;
    run.output = `${run.label}#${n}(${run.inputs.join(',')})`;
    return run.output;
  }

  private functions(process: string): FunctionRegistry {
    return (
      new FunctionRegistry()
        // step(label, delayMs?): a plain value naming its run and its inputs.
        .register('step', async (ctx: TaskContext<unknown[]>, ...inputs: unknown[]) => {
          const run = this.begin(process, ctx, inputs);
          if (typeof ctx.params[1] === 'number') await pause(ctx.params[1]);
          return this.output(run);
        })
        // big(label): a value larger than one znode.
        .register('big', (ctx: TaskContext<unknown[]>, ...inputs: unknown[]) => {
          const run = this.begin(process, ctx, inputs);
          return { tag: this.output(run), blob: 'x'.repeat(BIG_BYTES) } satisfies BigValue;
        })
        // flaky(label, failures): throws a plain Error on its first `failures` runs (in all processes).
        .register('flaky', (ctx: TaskContext<unknown[]>, ...inputs: unknown[]) => {
          const run = this.begin(process, ctx, inputs);
          const n = this.runsOf(run.task).length;
          if (n <= Number(ctx.params[1])) throw new Error(`${run.label} failed on run ${n}`);
          return this.output(run);
        })
        // broken(label, kind): always fails, with a plain Error or a PermanentError.
        .register('broken', (ctx: TaskContext<unknown[]>, ...inputs: unknown[]) => {
          const run = this.begin(process, ctx, inputs);
          if (ctx.params[1] === 'permanent')
            throw new PermanentError(`${run.label} cannot work`, { code: 'BROKEN' });
          throw new Error(`${run.label} failed`);
        })
        // stubborn(label): in a process named `doomed…`, ignores its signal and hangs until released.
        .register('stubborn', async (ctx: TaskContext<unknown[]>, ...inputs: unknown[]) => {
          const run = this.begin(process, ctx, inputs);
          if (process.startsWith('doomed')) {
            this.started();
            await new Promise<void>((resolve) => this.hanging.push(resolve));
          }
          return this.output(run);
        })
    );
  }
}

function chunksAnnounced(data: Buffer | null | undefined): number {
  if (data === null || data === undefined || data.length > 1024 || !data.includes('zkPlanChunked'))
    return 0;
  const parsed = JSON.parse(data.toString('utf8')) as { json?: { chunks?: unknown } };
  return typeof parsed.json?.chunks === 'number' ? parsed.json.chunks : 0;
}

/** Runs `attempt(crashAt)` for crashAt = 1, 2, … until it reports that the operation completed without a crash. */
async function everyCrashPoint(
  attempt: (crashAt: number) => Promise<'crashed' | 'completed'>,
): Promise<number> {
  for (let crashAt = 1; crashAt <= MAX_CRASH_POINTS; crashAt++) {
    const started = performance.now();
    const outcome = await attempt(crashAt);
    if (process.env['CRASH_INJECTION_DEBUG'])
      console.log(
        `crash point ${crashAt}: ${outcome} in ${Math.round(performance.now() - started)} ms`,
      );
    if (outcome === 'completed') return crashAt - 1;
  }
  throw new Error(`the operation still crashed at write ${MAX_CRASH_POINTS}`);
}

/**
 * Waits until the victim crashed, or `operation` completed and its background writes had time to
 * land; true when it crashed.
 */
async function crashedDuring(victim: Victim, operation: Promise<unknown>): Promise<boolean> {
  const finished = operation.then(() => pause(SETTLE_MS)).then(() => victim.point !== undefined);
  return await Promise.race([victim.crashed.then(() => true), finished]);
}

/** A pool of one worker on the doomed process, stopped as soon as `done` says so about one of its events. */
function workUntil(
  proc: MemoryProcess,
  done: (event: { readonly kind: 'completed' | 'failed'; readonly task: string }) => boolean,
): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const pool = proc.zkPlan.startWorkers(PARENT, {
      count: 1,
      backoff: FAST_BACKOFF,
      workerId: proc.name,
      drainTimeoutMs: 2_000,
    });
    const check = (kind: 'completed' | 'failed', task: string): void => {
      if (done({ kind, task })) pool.stop().then(resolve, reject);
    };
    proc.zkPlan.on('task:completed', ({ task }) => check('completed', task));
    proc.zkPlan.on('task:failed', ({ task }) => check('failed', task));
  });
}

/** The survivor: a new process with a pool of two workers, until the plan completes or fails. */
async function finishPlan(
  world: World,
  plan: string,
  before?: (survivor: MemoryProcess) => Promise<void>,
): Promise<{ survivor: MemoryProcess; error: unknown }> {
  const survivor = world.process('survivor');
  await before?.(survivor);
  const pool: WorkerPool = survivor.zkPlan.startWorkers(PARENT, {
    count: 2,
    backoff: FAST_BACKOFF,
    workerId: 'survivor',
    drainTimeoutMs: 2_000,
  });
  // The clock runs fast (a second per real millisecond): repairs that wait for a worker's next full
  // scan of indexed plans (every 10 s) come within milliseconds.
  const fast = setInterval(() => {
    clockOffsetMs += 1_000;
  }, 1);
  let error: unknown;
  try {
    await survivor.zkPlan.waitForCompletion(plan, { timeoutMs: 15_000 });
  } catch (caught) {
    error = caught;
  } finally {
    clearInterval(fast);
  }
  await pool.stop();
  return { survivor, error };
}

/** Tells where a failed check was: the crash point, and what is left in ZooKeeper. */
function where(world: World, victim: Victim, plan: string): string {
  return `${victim.describe()}\n${world.server.dump(plan)}`;
}

/** The plan completed and nothing of it is left: no task, no index entry, no builder node. */
async function expectCompleted(
  world: World,
  victim: Victim,
  survivor: MemoryProcess,
  plan: string,
  error: unknown,
): Promise<void> {
  expect(error, where(world, victim, plan)).toBeUndefined();
  expect((await survivor.zkPlan.plans.status(plan)).state, where(world, victim, plan)).toBe(
    'completed',
  );
  // Builder nodes of live sessions (the set-up process) may stay; those of dead ones went with their session.
  const live = new Set(world.server.sessions().map(({ sessionId }) => `builder-${sessionId}`));
  const left = world.server
    .children(plan)
    .filter((name) => name.startsWith('task-') || (name.startsWith('builder-') && !live.has(name)));
  expect(left, where(world, victim, plan)).toEqual([]);
  expect(world.server.children(`${plan}/runnable`), where(world, victim, plan)).toEqual([]);
}

/** What a task is expected to have been given, and whether its result is kept. */
interface Expected {
  readonly task: string;
  readonly producers: readonly string[];
  readonly kept: boolean;
}

/**
 * The dataflow of one run: each task ran once more than the doomed process ran it, unless the doomed
 * process stored its result first (then not again); each task's last run got, as inputs, the results
 * its producers stored (kept results where kept), in argument order.
 */
async function expectSingleRun(
  world: World,
  victim: Victim,
  survivor: MemoryProcess,
  plan: string,
  doomed: string,
  tasks: readonly Expected[],
  retried: ReadonlySet<string> = new Set(),
): Promise<void> {
  const context = where(world, victim, plan);
  expect(world.violations, context).toEqual([]);
  const stored = new Map<string, string | undefined>();
  for (const { task, kept } of tasks) {
    const runs = world.runsOf(task);
    const byDoomed = world.storedResult(doomed, task);
    if (!retried.has(task)) {
      expect(runs.length, `${task} runs: ${JSON.stringify(runs)}\n${context}`).toBe(
        world.runsOf(task, doomed).length + (byDoomed ? 0 : 1),
      );
    }
    const winner = byDoomed
      ? world.runsOf(task, doomed).at(-1)
      : runs.filter((run) => run.output !== undefined && run.process !== doomed).at(-1);
    expect(winner?.output, `${task} has no successful run\n${context}`).toBeDefined();
    if (kept)
      expect(show(await survivor.zkPlan.getResult(task)), `${task}'s kept result\n${context}`).toBe(
        winner?.output,
      );
    stored.set(task, winner?.output);
  }
  for (const { task, producers } of tasks) {
    if (producers.length === 0) continue;
    const last = world.runsOf(task).at(-1);
    expect(last?.inputs, `${task}'s inputs\n${context}`).toEqual(
      producers.map((producer) => stored.get(producer)),
    );
  }
}

/** Closes what is left: processes that did not crash are shut down cleanly. */
async function closeAll(...procs: readonly (MemoryProcess | undefined)[]): Promise<void> {
  await Promise.all(procs.map((proc) => proc?.zkPlan.close()));
}

describe('crash injection over the seam: a process dies right before any of its writes', () => {
  // Date.now runs ahead of the real clock by clockOffsetMs, so that finishPlan can make time pass
  // fast (timers stay real; faking Date itself would make the codec refuse the fake Date class).
  beforeEach(() => {
    clockOffsetMs = 0;
    const realNow = Date.now.bind(Date);
    vi.spyOn(Date, 'now').mockImplementation(() => realNow() + clockOffsetMs);
  });
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('performing a task with two dependents: the next worker finishes with the outcome of one run', async () => {
    const points = await everyCrashPoint(async (crashAt) => {
      const world = new World();
      const setup = world.process('setup');
      const plan = await setup.zkPlan.createPlan(PARENT);
      const producer = await setup.zkPlan.addTask(plan, call('step', 'p'), [], {
        keepResult: true,
      });
      const first = await setup.zkPlan.addTask(plan, call('step', 'c1'), [producer], {
        keepResult: true,
      });
      const second = await setup.zkPlan.addTask(plan, call('step', 'c2'), [producer], {
        keepResult: true,
      });
      await setup.zkPlan.markAsReady(plan);
      const { proc: doomed, victim } = world.doomed('doomed', crashAt);
      const crashed = await crashedDuring(
        victim,
        workUntil(doomed, (event) => event.task === producer),
      );
      const { survivor, error } = await finishPlan(world, plan);
      await expectCompleted(world, victim, survivor, plan, error);
      await expectSingleRun(world, victim, survivor, plan, doomed.name, [
        { task: producer, producers: [], kept: true },
        { task: first, producers: [producer], kept: true },
        { task: second, producers: [producer], kept: true },
      ]);
      await closeAll(setup, survivor, crashed ? undefined : doomed);
      return crashed ? 'crashed' : 'completed';
    });
    expect(points).toBeGreaterThanOrEqual(8); // claim, result, kept result, ready, two inputs and deps, index, deletion
  });

  it.each([
    ['a small result', 'step'],
    ['a chunk-sized result', 'big'],
  ])(
    'propagating %s to several dependents, one taking it twice: each dependent gets the stored result once',
    async (_title, fn) => {
      const points = await everyCrashPoint(async (crashAt) => {
        const world = new World();
        const setup = world.process('setup');
        const plan = await setup.zkPlan.createPlan(PARENT);
        // Not kept: the dependents' inputs are all that is left of it.
        const producer = await setup.zkPlan.addTask(plan, call(fn, 'p'), []);
        const dependents = await setup.zkPlan.addTasks(plan, [
          { task: call('step', 'd1'), args: [producer], options: { keepResult: true } },
          { task: call('step', 'd2'), args: [producer, producer], options: { keepResult: true } },
          { task: call('step', 'd3'), args: [producer, 1], options: { keepResult: true } },
        ]);
        const [d1, d2, d3] = dependents as [string, string, string];
        await setup.zkPlan.markAsReady(plan);
        const { proc: doomed, victim } = world.doomed('doomed', crashAt);
        const crashed = await crashedDuring(
          victim,
          workUntil(doomed, (event) => event.task === producer),
        );
        const { survivor, error } = await finishPlan(world, plan);
        await expectCompleted(world, victim, survivor, plan, error);
        await expectSingleRun(world, victim, survivor, plan, doomed.name, [
          { task: producer, producers: [], kept: false },
          { task: d1, producers: [producer], kept: true },
          { task: d2, producers: [producer, producer], kept: true },
          { task: d3, producers: [producer, d2], kept: true },
        ]);
        await closeAll(setup, survivor, crashed ? undefined : doomed);
        return crashed ? 'crashed' : 'completed';
      });
      expect(points).toBeGreaterThanOrEqual(fn === 'big' ? 20 : 10);
    },
  );

  // The dependent's own deletion: its chunked input (deleted chunk by chunk) must be gone before its
  // result is, or a crash in between leaves a task with an input and nothing else, which no worker
  // takes or deletes and which keeps the plan open.
  it('deleting a task whose input is chunk-sized: the next worker finishes with the outcome of one run', async () => {
    const points = await everyCrashPoint(async (crashAt) => {
      const world = new World();
      const setup = world.process('setup');
      const plan = await setup.zkPlan.createPlan(PARENT);
      const producer = await setup.zkPlan.addTask(plan, call('big', 'p'), []);
      const dependent = await setup.zkPlan.addTask(plan, call('step', 'd'), [producer], {
        keepResult: true,
      });
      await setup.zkPlan.markAsReady(plan);
      const { proc: doomed, victim } = world.doomed('doomed', crashAt);
      const crashed = await crashedDuring(
        victim,
        workUntil(doomed, (event) => event.task === dependent),
      );
      const { survivor, error } = await finishPlan(world, plan);
      await expectCompleted(world, victim, survivor, plan, error);
      await expectSingleRun(world, victim, survivor, plan, doomed.name, [
        { task: producer, producers: [], kept: false },
        { task: dependent, producers: [producer], kept: true },
      ]);
      await closeAll(setup, survivor, crashed ? undefined : doomed);
      return crashed ? 'crashed' : 'completed';
    });
    expect(points).toBeGreaterThanOrEqual(20); // the producer's chunked writes, then the dependent's claim, result and deletion
  });

  describe('adding tasks with internal and external links: the plan has the whole batch or none of it', () => {
    /** The batch: a ← e1, b ← (a, e2, a), c ← b; e1 and e2 exist before it. */
    const batch = (e1: string, e2: string): TaskToAdd[] => [
      { task: call('step', 'a'), args: [e1, e2] },
      { task: call('step', 'b'), args: [0, e2, 0], options: { keepResult: true } },
      { task: call('step', 'c'), args: [1], options: { keepResult: true } },
    ];

    async function addWithCrashes(running: boolean): Promise<number> {
      return await everyCrashPoint(async (crashAt) => {
        const world = new World();
        const setup = world.process('setup');
        const plan = await setup.zkPlan.createPlan(PARENT);
        const e1 = await setup.zkPlan.addTask(plan, call('step', 'e1'), [], { keepResult: true });
        let runner: WorkerPool | undefined;
        if (running) {
          // A running plan: e1 has completed (its result kept), e2 runs while the batch is added.
          await setup.zkPlan.markAsReady(plan);
          runner = setup.zkPlan.startWorkers(PARENT, {
            count: 2,
            backoff: FAST_BACKOFF,
            workerId: 'runner',
          });
          await setup.zkPlan.waitForCompletion(plan, { timeoutMs: 5_000 });
        }
        const e2 = await setup.zkPlan.addTask(plan, call('step', 'e2', running ? 2 : 0), [], {
          keepResult: true,
        });
        const { proc: doomed, victim } = world.doomed('doomed', crashAt);
        let paths: string[] = [];
        const crashed = await crashedDuring(
          victim,
          doomed.zkPlan.addTasks(plan, batch(e1, e2)).then((added) => {
            paths = added;
          }),
        );
        if (!running) await setup.zkPlan.markAsReady(plan);
        const { survivor, error } = await finishPlan(world, plan);
        await runner?.stop();
        await expectCompleted(world, victim, survivor, plan, error);
        const batchRuns = world.runs.filter((run) => ['a', 'b', 'c'].includes(run.label));
        const context = `${where(world, victim, plan)}\nbatch runs: ${JSON.stringify(batchRuns)}`;
        expect([0, 3], `the batch ran in part\n${context}`).toContain(batchRuns.length);
        if (!crashed) expect(batchRuns.length, context).toBe(3);
        const existing: Expected[] = [
          { task: e1, producers: [], kept: true },
          { task: e2, producers: [], kept: true },
        ];
        if (batchRuns.length === 0) {
          await expectSingleRun(world, victim, survivor, plan, doomed.name, existing);
        } else {
          const [a, b, c] = (
            paths.length === 3 ? paths : [...new Set(batchRuns.map((run) => run.task))].sort()
          ) as [string, string, string];
          await expectSingleRun(world, victim, survivor, plan, doomed.name, [
            ...existing,
            { task: a, producers: [e1, e2], kept: false },
            { task: b, producers: [a, e2, a], kept: true },
            { task: c, producers: [b], kept: true },
          ]);
        }
        await closeAll(setup, survivor, crashed ? undefined : doomed);
        return crashed ? 'crashed' : 'completed';
      });
    }

    // A crash before any write: before the batch's marker the batch is deleted, after it completed (by the workers).
    it('to a plan that is not ready yet', async () => {
      expect(await addWithCrashes(false)).toBeGreaterThanOrEqual(10);
    });

    it('to a running plan, a producer completed (kept result) and one running', async () => {
      expect(await addWithCrashes(true)).toBeGreaterThanOrEqual(10);
    });
  });

  it('retrying a task that failed with a plain Error: it succeeds on a later try, its dependent runs once', async () => {
    const points = await everyCrashPoint(async (crashAt) => {
      const world = new World();
      const setup = world.process('setup');
      const plan = await setup.zkPlan.createPlan(PARENT, { maxAttempts: 3, initialDelayMs: 0 });
      const flaky = await setup.zkPlan.addTask(plan, call('flaky', 't', 2), [], {
        keepResult: true,
      });
      const dependent = await setup.zkPlan.addTask(plan, call('step', 'u'), [flaky], {
        keepResult: true,
      });
      await setup.zkPlan.markAsReady(plan);
      const { proc: doomed, victim } = world.doomed('doomed', crashAt);
      const crashed = await crashedDuring(
        victim,
        workUntil(doomed, (event) => event.task === flaky && event.kind === 'failed'),
      );
      const { survivor, error } = await finishPlan(world, plan);
      await expectCompleted(world, victim, survivor, plan, error);
      // Two failures, then the success: whether or not the doomed process lived to count its failure.
      expect(
        world.runsOf(flaky).map((run) => run.output === undefined),
        where(world, victim, plan),
      ).toEqual([true, true, false]);
      await expectSingleRun(
        world,
        victim,
        survivor,
        plan,
        doomed.name,
        [
          { task: flaky, producers: [], kept: true },
          { task: dependent, producers: [flaky], kept: true },
        ],
        new Set([flaky]),
      );
      await closeAll(setup, survivor, crashed ? undefined : doomed);
      return crashed ? 'crashed' : 'completed';
    });
    expect(points).toBeGreaterThanOrEqual(3); // claim, attempts, index entry, release
  });

  describe('failing a task for good: the plan fails with that task, which never runs again', () => {
    it.each([
      {
        title: 'its last attempt fails with a plain Error',
        kind: 'plain',
        failurePolicy: 'continue',
      },
      {
        title: 'its last attempt fails with a plain Error',
        kind: 'plain',
        failurePolicy: 'failFast',
      },
      { title: 'it throws PermanentError', kind: 'permanent', failurePolicy: 'continue' },
      { title: 'it throws PermanentError', kind: 'permanent', failurePolicy: 'failFast' },
    ] as const)('$title, in a $failurePolicy plan', async ({ kind, failurePolicy }) => {
      const points = await everyCrashPoint(async (crashAt) => {
        const world = new World();
        const setup = world.process('setup');
        const options: PlanOptions = { failurePolicy, initialDelayMs: 0 };
        const plan = await setup.zkPlan.createPlan(PARENT, options);
        const broken = await setup.zkPlan.addTask(
          plan,
          call('broken', 'x', kind),
          [],
          kind === 'plain' ? { maxAttempts: 1 } : {},
        );
        const blocked = await setup.zkPlan.addTask(plan, call('step', 'y'), [broken]);
        await setup.zkPlan.markAsReady(plan);
        const { proc: doomed, victim } = world.doomed('doomed', crashAt);
        const crashed = await crashedDuring(
          victim,
          workUntil(doomed, (event) => event.task === broken),
        );
        const markerWritten = world.created(doomed.name, `${plan}/failed`);
        // An independent branch, added once the doomed process is gone.
        const [z1, z2] = (await setup.zkPlan.addTasks(plan, [
          { task: call('step', 'z1'), options: { keepResult: true } },
          { task: call('step', 'z2'), args: [0], options: { keepResult: true } },
        ])) as [string, string];
        const { survivor, error } = await finishPlan(world, plan);
        const context = where(world, victim, plan);
        expect(error, context).toBeInstanceOf(PlanFailedError);
        const failedError = error as PlanFailedError;
        expect(
          failedError.failedTasks.map(({ task }) => task),
          context,
        ).toEqual([broken]);
        expect(failedError.blockedTasks, context).toContain(blocked);
        const status = await survivor.zkPlan.plans.status(plan);
        expect(status.state, context).toBe('failed');
        expect(
          status.failed.map(({ task }) => task),
          context,
        ).toEqual([broken]);
        expect(status.failed[0]?.failure?.message, context).toContain(
          kind === 'permanent' ? 'x cannot work' : 'x failed',
        );
        // A failure for good is never retryable, whether its error said so or its tries ran out.
        expect(status.failed[0]?.failure?.retryable, context).toBe(false);
        expect(world.violations, context).toEqual([]);
        expect(world.runsOf(blocked), context).toEqual([]);
        // Tried again only when the doomed process died before it recorded the final try: from
        // then on, whoever claims the task finishes failing it (the final try's record is not retryable).
        const counted = world.created(doomed.name, `${broken}/attempts`);
        expect(world.runsOf(broken).length, context).toBe(
          world.runsOf(broken, doomed.name).length + (counted ? 0 : 1),
        );
        if (failurePolicy === 'continue') {
          await expectSingleRun(world, victim, survivor, plan, doomed.name, [
            { task: z1, producers: [], kept: true },
            { task: z2, producers: [z1], kept: true },
          ]);
        } else {
          expect(world.runsOf(z1).length + world.runsOf(z2).length, context).toBeLessThanOrEqual(2);
          if (markerWritten)
            expect(
              world.runsOf(z1),
              `nothing starts in a failFast plan that failed\n${context}`,
            ).toEqual([]);
        }
        await closeAll(setup, survivor, crashed ? undefined : doomed);
        return crashed ? 'crashed' : 'completed';
      });
      expect(points).toBeGreaterThanOrEqual(4); // claim, attempts, failed, index entry, plan marker, touch, release
    });
  });

  it('releasing a task on a pool stop, its function ignoring the signal: another worker runs it, the late result is refused', async () => {
    const points = await everyCrashPoint(async (crashAt) => {
      const world = new World();
      const setup = world.process('setup');
      const plan = await setup.zkPlan.createPlan(PARENT);
      const stubborn = await setup.zkPlan.addTask(plan, call('stubborn', 'r'), [], {
        keepResult: true,
      });
      const dependent = await setup.zkPlan.addTask(plan, call('step', 's'), [stubborn], {
        keepResult: true,
      });
      await setup.zkPlan.markAsReady(plan);
      const { proc: doomed, victim } = world.doomed('doomed', crashAt);
      const stopped = (async () => {
        const pool = doomed.zkPlan.startWorkers(PARENT, {
          count: 1,
          backoff: FAST_BACKOFF,
          workerId: doomed.name,
          drainTimeoutMs: 0,
        });
        await world.hangingStarted;
        await pool.stop();
      })();
      const crashed = await crashedDuring(victim, stopped);
      const { survivor, error } = await finishPlan(world, plan);
      await expectCompleted(world, victim, survivor, plan, error);
      const writesBefore = world.writes.filter(
        (write) => write.client === doomed.name && write.ok,
      ).length;
      world.releaseHanging(); // the ignored signal's function returns at last
      await pause(SETTLE_MS);
      expect(
        world.writes.filter((write) => write.client === doomed.name && write.ok).length,
        `the released claim wrote\n${where(world, victim, plan)}`,
      ).toBe(writesBefore);
      await expectSingleRun(world, victim, survivor, plan, doomed.name, [
        { task: stubborn, producers: [], kept: true },
        { task: dependent, producers: [stubborn], kept: true },
      ]);
      await closeAll(setup, survivor, crashed ? undefined : doomed);
      return crashed ? 'crashed' : 'completed';
    });
    expect(points).toBeGreaterThanOrEqual(2); // claim, release
  });

  describe('retryFailed: a crashed retry leaves the plan failed (run it again) or retried', () => {
    it.each(['continue', 'failFast'] as const)('in a %s plan', async (failurePolicy) => {
      const points = await everyCrashPoint(async (crashAt) => {
        const world = new World();
        const setup = world.process('setup');
        const plan = await setup.zkPlan.createPlan(PARENT, { failurePolicy, initialDelayMs: 0 });
        const flaky = await setup.zkPlan.addTask(plan, call('flaky', 'x', 1), [], {
          keepResult: true,
          maxAttempts: 1,
        });
        const dependent = await setup.zkPlan.addTask(plan, call('step', 'y'), [flaky], {
          keepResult: true,
        });
        await setup.zkPlan.markAsReady(plan);
        const first = setup.zkPlan.startWorkers(PARENT, {
          count: 1,
          backoff: FAST_BACKOFF,
          workerId: 'first',
        });
        await expect(
          setup.zkPlan.waitForCompletion(plan, { timeoutMs: 5_000 }),
        ).rejects.toBeInstanceOf(PlanFailedError);
        await first.stop();
        const { proc: doomed, victim } = world.doomed('doomed', crashAt);
        let reset: string[] = [];
        const crashed = await crashedDuring(
          victim,
          doomed.zkPlan.control.retryFailed(plan).then((tasks) => {
            reset = tasks;
          }),
        );
        if (!crashed) expect(reset).toEqual([flaky]);
        const { survivor, error } = await finishPlan(world, plan, async (next) => {
          // The retry command died: whoever sees the plan still failed runs it again.
          if ((await next.zkPlan.plans.status(plan)).state === 'failed')
            await next.zkPlan.control.retryFailed(plan);
        });
        await expectCompleted(world, victim, survivor, plan, error);
        expect(
          world.runsOf(flaky).map((run) => run.output === undefined),
          where(world, victim, plan),
        ).toEqual([true, false]);
        await expectSingleRun(
          world,
          victim,
          survivor,
          plan,
          doomed.name,
          [
            { task: flaky, producers: [], kept: true },
            { task: dependent, producers: [flaky], kept: true },
          ],
          new Set([flaky]),
        );
        await closeAll(setup, survivor, crashed ? undefined : doomed);
        return crashed ? 'crashed' : 'completed';
      });
      expect(points).toBeGreaterThanOrEqual(4); // attempts, failed, index entry, marker, touch
    });
  });
});
