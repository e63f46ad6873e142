/**
 * `ctx.continueWith` over the in-memory ZooKeeper: a task hands its result over to a task it makes,
 * and its dependents get that task's result as its own. A map/reduce over a runtime list, a
 * recursive split nested many levels deep on a single worker loop (nothing waits on children), the
 * history and status of a hand-over, a continuation that fails for good, what a run that hands
 * over differently from an earlier one gets, bad input, and a crash of the handing-over process
 * before each of its writes: the dependent gets exactly one result, the right one, and nothing is
 * made twice.
 */
import { describe, expect, it } from 'vitest';
import { PlanFailedError } from '../../src/errors/plan-errors.js';
import { InvalidArgumentError } from '../../src/errors/usage-errors.js';
import { FunctionRegistry } from '../../src/exec/function-registry.js';
import type { TaskContext } from '../../src/exec/task-context.js';
import { call } from '../../src/exec/task-spec.js';
import { encodeValue } from '../../src/serialization/codec.js';
import { CONTINUATION, CONTINUED_SERIAL, childPath } from '../../src/zk/layout.js';
import { MemoryZooKeeper } from '../../src/testing/index.js';
import { CrashScheduler, Victim, WRITE_OPS } from '../support/crash-scheduler.js';
import { FAST_BACKOFF, memoryProcess, type MemoryProcess } from '../support/memory-plan.js';

const PARENT = '/continue';
const MAX_CRASH_POINTS = 200;

/** What the task functions of every process did. */
interface Runs {
  splits: number;
  /** The task of each run of `square`, and of `sum`. */
  readonly squareTasks: string[];
  readonly sumTasks: string[];
  /** What each run of `report` was given: the split's result, as its dependent sees it. */
  readonly reported: unknown[];
  /** The continuation each run of `split` handed over to... as far as its spawn call tells. */
  readonly spawned: string[][];
}

function newRuns(): Runs {
  return { splits: 0, squareTasks: [], sumTasks: [], reported: [], spawned: [] };
}

/**
 * `split(n)` spawns a `square` per item and hands over to a `sum` of them; `report` is given the
 * split's result (the sum, through the hand-over); `tree(lo, hi)` is a recursive split: the sum of
 * squares of [lo, hi), computed by halves handed over to an `add` of two subtrees.
 */
function functions(runs: Runs): FunctionRegistry {
  return new FunctionRegistry()
    .register('split', async (ctx: TaskContext<[number]>) => {
      runs.splits += 1;
      const items = Array.from({ length: ctx.params[0] }, (_, item) => ({
        task: call('square', item),
      }));
      const paths = await ctx.spawn(items);
      runs.spawned.push(paths);
      return ctx.continueWith(call('sum'), paths);
    })
    .register('square', (ctx: TaskContext<[number]>) => {
      runs.squareTasks.push(ctx.task);
      return ctx.params[0] * ctx.params[0];
    })
    .register('sum', (ctx, ...parts: number[]) => {
      runs.sumTasks.push(ctx.task);
      return parts.reduce((total, part) => total + part, 0);
    })
    .register('report', (_ctx, value: unknown) => {
      runs.reported.push(value);
      return value;
    })
    .register('tree', async (ctx: TaskContext<[number, number]>) => {
      const [lo, hi] = ctx.params;
      if (hi - lo <= 2) return squaresBetween(lo, hi);
      const middle = Math.floor((lo + hi) / 2);
      const halves = await ctx.spawn([
        { task: call('tree', lo, middle) },
        { task: call('tree', middle, hi) },
      ]);
      return ctx.continueWith(call('add'), halves);
    })
    .register('add', (_ctx, left: number, right: number) => left + right);
}

function squaresBetween(lo: number, hi: number): number {
  let total = 0;
  for (let item = lo; item < hi; item++) total += item * item;
  return total;
}

async function splitAndReport(
  proc: MemoryProcess,
  count: number,
  planOptions: { maxAttempts?: number } = {},
): Promise<{ plan: string; split: string; report: string }> {
  const plan = await proc.zkPlan.createPlan(PARENT, planOptions);
  const split = await proc.zkPlan.addTask(plan, call('split', count), [], { keepResult: true });
  const report = await proc.zkPlan.addTask(plan, call('report'), [split], { keepResult: true });
  await proc.zkPlan.markAsReady(plan);
  return { plan, split, report };
}

describe('ctx.continueWith', () => {
  it.each([0, 1, 200])(
    'a map over a runtime list of %i handed over to their sum: the dependent gets the sum, keepResult keeps it under the spawner',
    async (count) => {
      const runs = newRuns();
      const server = new MemoryZooKeeper();
      const proc = memoryProcess(server, 'p', functions(runs));
      const { plan, split, report } = await splitAndReport(proc, count);
      const pool = proc.zkPlan.startWorkers(PARENT, { count: 4, backoff: FAST_BACKOFF });
      await proc.zkPlan.waitForCompletion(plan, { timeoutMs: 30_000 });
      await pool.stop();
      expect(runs.reported).toEqual([squaresBetween(0, count)]);
      expect(await proc.zkPlan.getResult(split)).toBe(squaresBetween(0, count));
      expect(await proc.zkPlan.getResult(report)).toBe(squaresBetween(0, count));
      expect(runs.splits).toBe(1);
      expect(runs.sumTasks).toHaveLength(1);
      expect(new Set(runs.squareTasks).size).toBe(count);
      // The plan counts every task, the spawned ones and the continuation included.
      const status = await proc.zkPlan.plans.status(plan);
      expect(status.state).toBe('completed');
      expect(status.counts.done).toBe(count + 3);
      // The split's history record names its continuation; the record of the sum is its own.
      const view = await proc.zkPlan.plans.describe(plan);
      const splitEntry = view.tasks.find((entry) => entry.task === split);
      expect(splitEntry?.state).toBe('done');
      expect(splitEntry?.continuedBy).toBe(runs.sumTasks[0]);
      // Its graph grew while it ran: a snapshot would make the spawned tasks twice.
      const exported = await proc.zkPlan.snapshots.export(plan).catch((error: unknown) => error);
      expect(exported).toMatchObject({ code: 'SNAPSHOT_SPAWNED' });
    },
  );

  it('a recursive split nests hand-overs seven levels deep and completes on a single worker loop: no worker waits on its children', async () => {
    const runs = newRuns();
    const server = new MemoryZooKeeper();
    const proc = memoryProcess(server, 'p', functions(runs));
    const plan = await proc.zkPlan.createPlan(PARENT);
    const tree = await proc.zkPlan.addTask(plan, call('tree', 0, 256), [], { keepResult: true });
    const report = await proc.zkPlan.addTask(plan, call('report'), [tree]);
    await proc.zkPlan.markAsReady(plan);
    const handedOver: string[] = [];
    proc.zkPlan.on('task:continued', (event) => handedOver.push(event.continuation));
    const pool = proc.zkPlan.startWorkers(PARENT, { count: 1, backoff: FAST_BACKOFF });
    await proc.zkPlan.waitForCompletion(plan, { timeoutMs: 60_000 });
    await pool.stop();
    expect(await proc.zkPlan.getResult(tree)).toBe(squaresBetween(0, 256));
    expect(runs.reported).toEqual([squaresBetween(0, 256)]);
    // 256 items split down to pairs: 127 inner trees, each handed over once to its own add.
    expect(handedOver).toHaveLength(127);
    expect(new Set(handedOver).size).toBe(127);
    expect(report).toBeDefined();
  });

  it('a continuation that fails for good fails the plan, and the task it continues and its dependent are blocked behind it', async () => {
    const runs = newRuns();
    const registry = functions(runs)
      .register('hand-to-failing', (ctx: TaskContext) => ctx.continueWith(call('boom')))
      .register('boom', () => {
        throw new Error('the continuation fails');
      });
    const server = new MemoryZooKeeper();
    const proc = memoryProcess(server, 'p', registry);
    const plan = await proc.zkPlan.createPlan(PARENT, { maxAttempts: 1 });
    const spawner = await proc.zkPlan.addTask(plan, call('hand-to-failing'), [], { key: 'head' });
    const report = await proc.zkPlan.addTask(plan, call('report'), [spawner]);
    await proc.zkPlan.markAsReady(plan);
    const pool = proc.zkPlan.startWorkers(PARENT, { count: 2, backoff: FAST_BACKOFF });
    const failed = await proc.zkPlan.waitForCompletion(plan, { timeoutMs: 10_000 }).then(
      () => undefined,
      (error: unknown) => error,
    );
    await pool.stop();
    expect(failed).toBeInstanceOf(PlanFailedError);
    const status = await proc.zkPlan.plans.status(plan);
    const view = await proc.zkPlan.plans.describe(plan);
    const failedFns = view.tasks.filter((task) => task.state === 'failed').map((task) => task.fn);
    expect(failedFns).toEqual(['boom']);
    expect(status.failed).toHaveLength(1);
    expect(status.blocked.map((entry) => entry.task).sort()).toEqual([spawner, report].sort());
    expect(runs.reported).toEqual([]);
  });

  it.each([
    ['returns a value', (ctx: TaskContext) => (ctx.attempt > 0 ? 'a value' : undefined)],
    ['hands over to another function', (ctx: TaskContext) => ctx.continueWith(call('square', 2))],
  ])(
    'a run that %s where an earlier run handed over to `sum` fails for good with SPAWN_MISMATCH',
    async (_what, body) => {
      const runs = newRuns();
      const registry = functions(runs).register('fickle', body);
      const server = new MemoryZooKeeper();
      const proc = memoryProcess(server, 'p', registry);
      const plan = await proc.zkPlan.createPlan(PARENT, { maxAttempts: 3 });
      const fickle = await proc.zkPlan.addTask(plan, call('fickle'));
      // An earlier run's hand-over record, as a run that died after writing it leaves it.
      const record = childPath(fickle, CONTINUATION);
      await proc.zk.create(
        record,
        encodeValue(
          { batch: 'dead-spawn-1', fns: ['sum'], link: CONTINUED_SERIAL },
          'record',
          record,
        ),
        'persistent',
      );
      await proc.zkPlan.markAsReady(plan);
      const pool = proc.zkPlan.startWorkers(PARENT, { backoff: FAST_BACKOFF });
      const failed = await proc.zkPlan.waitForCompletion(plan, { timeoutMs: 10_000 }).then(
        () => undefined,
        (error: unknown) => error,
      );
      await pool.stop();
      expect(failed).toBeInstanceOf(PlanFailedError);
      const task = (await proc.zkPlan.plans.describe(plan)).tasks.find(
        (entry) => entry.task === fickle,
      );
      expect(task?.failure?.code).toBe('SPAWN_MISMATCH');
      expect(task?.failedTries).toBe(1); // for good at the first try: running it again would ask the same
      expect(runs.squareTasks).toEqual([]);
    },
  );

  it.each([
    ['its own path', async (ctx: TaskContext) => ctx.continueWith(call('report'), [ctx.task])],
    [
      'a task it spawned that takes its result',
      async (ctx: TaskContext) => {
        const [child] = await ctx.spawn([{ task: call('report'), args: [ctx.task] }]);
        return ctx.continueWith(call('report'), [child as string]);
      },
    ],
  ])(
    'a hand-over to a task that would wait for the handing-over task (%s) is refused, so the plan fails rather than hangs',
    async (_what, body) => {
      const registry = functions(newRuns()).register('head', body);
      const proc = memoryProcess(new MemoryZooKeeper(), 'p', registry);
      const plan = await proc.zkPlan.createPlan(PARENT, { maxAttempts: 1 });
      const head = await proc.zkPlan.addTask(plan, call('head'));
      await proc.zkPlan.markAsReady(plan);
      const pool = proc.zkPlan.startWorkers(PARENT, { backoff: FAST_BACKOFF });
      const failed = await proc.zkPlan.waitForCompletion(plan, { timeoutMs: 10_000 }).then(
        () => undefined,
        (error: unknown) => error,
      );
      await pool.stop();
      expect(failed).toBeInstanceOf(PlanFailedError);
      const task = (await proc.zkPlan.plans.describe(plan)).tasks.find(
        (entry) => entry.task === head,
      );
      expect(task?.failure?.code).toBe('INVALID_ARGUMENT');
      expect(task?.failure?.message).toContain(
        'cannot hand over to a task that waits for its own result',
      );
    },
  );

  it('a forged hand-over record whose link leaves no serial below it is refused as malformed: the task fails, nothing hangs', async () => {
    const runs = newRuns();
    const registry = functions(runs).register('head', (ctx: TaskContext) =>
      ctx.continueWith(call('sum')),
    );
    const proc = memoryProcess(new MemoryZooKeeper(), 'p', registry);
    const plan = await proc.zkPlan.createPlan(PARENT, { maxAttempts: 1 });
    const head = await proc.zkPlan.addTask(plan, call('head'));
    const record = childPath(head, CONTINUATION);
    await proc.zk.create(
      record,
      encodeValue({ batch: 'dead-spawn-1', fns: ['sum'], link: 9_000_000_000 }, 'record', record),
      'persistent',
    );
    await proc.zkPlan.markAsReady(plan);
    const pool = proc.zkPlan.startWorkers(PARENT, { backoff: FAST_BACKOFF });
    const failed = await proc.zkPlan.waitForCompletion(plan, { timeoutMs: 10_000 }).then(
      () => undefined,
      (error: unknown) => error,
    );
    await pool.stop();
    expect(failed).toBeInstanceOf(PlanFailedError);
    const task = (await proc.zkPlan.plans.describe(plan)).tasks.find(
      (entry) => entry.task === head,
    );
    expect(task?.failure?.message).toContain('not a continuation serial');
    expect(runs.sumTasks).toEqual([]);
  });

  it('bad input to ctx.continueWith fails the try with INVALID_ARGUMENT, and a continuation of another task is refused', async () => {
    const errors: unknown[] = [];
    let stolen: unknown;
    const registry = new FunctionRegistry()
      .register('bad', (ctx: TaskContext) => {
        for (const make of [
          () => ctx.continueWith(call('bad'), 'not a list' as never),
          () => ctx.continueWith(call('bad'), [3] as never),
          () => ctx.continueWith('not a task' as never),
        ]) {
          try {
            make();
          } catch (error) {
            errors.push(error);
          }
        }
        stolen = ctx.continueWith(call('bad'));
        return 'done';
      })
      .register('thief', () => stolen);
    const server = new MemoryZooKeeper();
    const proc = memoryProcess(server, 'p', registry);
    const plan = await proc.zkPlan.createPlan(PARENT, { maxAttempts: 1 });
    const bad = await proc.zkPlan.addTask(plan, call('bad'));
    const thief = await proc.zkPlan.addTask(plan, call('thief'), [bad]);
    await proc.zkPlan.markAsReady(plan);
    const pool = proc.zkPlan.startWorkers(PARENT, { backoff: FAST_BACKOFF });
    await proc.zkPlan.waitForCompletion(plan, { timeoutMs: 10_000 }).catch(() => undefined);
    await pool.stop();
    expect(errors).toHaveLength(3);
    for (const error of errors) expect(error).toBeInstanceOf(InvalidArgumentError);
    const task = (await proc.zkPlan.plans.describe(plan)).tasks.find(
      (entry) => entry.task === thief,
    );
    expect(task?.failure?.code).toBe('INVALID_ARGUMENT');
    expect(task?.failure?.message).toContain(`made by task ${bad}`);
  });
});

describe('ctx.continueWith under crashes', () => {
  it(
    'a crash of the handing-over process before any of its writes: the dependent gets one result, the right one, and one continuation exists',
    { timeout: 600_000 },
    async () => {
      const outcomes: string[] = [];
      const ITEMS = 3;
      for (let crashAt = 1; crashAt <= MAX_CRASH_POINTS; crashAt++) {
        const runs = newRuns();
        const scheduler = new CrashScheduler();
        const server = new MemoryZooKeeper({ scheduler });
        const builder = memoryProcess(server, 'builder', functions(runs));
        const { plan, split, report } = await splitAndReport(builder, ITEMS);
        const doomed = memoryProcess(server, 'doomed', functions(runs));
        const victim = new Victim(server, doomed.zk, crashAt);
        scheduler.victim = victim;
        const doomedPool = doomed.zkPlan.startWorkers(PARENT, { backoff: FAST_BACKOFF });
        await Promise.race([
          victim.crashed,
          builder.zkPlan.waitForCompletion(plan, { timeoutMs: 10_000 }),
        ]);
        scheduler.victim = undefined;
        const crashed = victim.point !== undefined;
        if (crashed) void doomedPool.stop().catch(() => undefined);
        else await doomedPool.stop();
        const survivor = memoryProcess(server, 'survivor', functions(runs));
        const pool = survivor.zkPlan.startWorkers(PARENT, { count: 2, backoff: FAST_BACKOFF });
        // What a deletion cut short leaves out of the runnable index is found by the workers' full
        // scan, every 10 s: the wait allows for it.
        await survivor.zkPlan.waitForCompletion(plan, { timeoutMs: 30_000 });
        await pool.stop();

        const expected = squaresBetween(0, ITEMS);
        expect(await survivor.zkPlan.getResult(split)).toBe(expected);
        expect(await survivor.zkPlan.getResult(report)).toBe(expected);
        // The dependent may run again (its own worker died), but it is only ever given the one result.
        expect(new Set(runs.reported)).toEqual(new Set([expected]));
        expect(new Set(runs.spawned.map((paths) => paths.join(','))).size).toBe(1);
        expect(new Set(runs.squareTasks)).toEqual(new Set(runs.spawned[0]));
        expect(new Set(runs.sumTasks).size).toBe(1);
        const view = await survivor.zkPlan.plans.describe(plan);
        expect(view.tasks.filter((task) => task.fn === 'sum')).toHaveLength(1);
        expect(view.tasks.every((task) => task.state === 'done')).toBe(true);
        outcomes.push(
          `crash before write ${crashAt}: split ran ${runs.splits}×, squares ${runs.squareTasks.length}×, sum ${runs.sumTasks.length}×, report ${runs.reported.length}×`,
        );
        if (!crashed) break;
      }
      expect(outcomes.length).toBeGreaterThan(20);
      expect(outcomes.at(-1)).toMatch(/split ran 1×, squares 3×, sum 1×, report 1×/);
      console.log(outcomes.join('\n'));
    },
  );
});

/**
 * The writes of the spawn and hand-over protocols: under the spawning task, the plan's mark, batch
 * markers, task creates, and a continuation's link and input. The others (feeding inputs, finishing
 * tasks) are those of every plan, which the plan simulation covers.
 */
function isSpawnWrite(plan: string, split: string, path: string): boolean {
  return (
    path.startsWith(`${split}/`) ||
    path === `${plan}/spawned` ||
    path.startsWith(`${plan}/batch-`) ||
    path === `${plan}/task-` ||
    path.endsWith('/prov-9999999999')
  );
}

describe('ctx.continueWith under lost replies', () => {
  it.each([
    ['the same session', 'every write', false],
    ['a new session, the first having expired', 'each write of the spawn and hand-over', true],
  ])(
    'a reply lost and resent through %s, at %s of the worker process: the dependent gets the one right result, and one continuation exists',
    { timeout: 600_000 },
    async (_how, _where, expireSession) => {
      const ITEMS = 3;
      const outcomes: string[] = [];
      for (let faultAt = 1; faultAt <= MAX_CRASH_POINTS; faultAt++) {
        const runs = newRuns();
        const server = new MemoryZooKeeper();
        const builder = memoryProcess(server, 'builder', functions(runs));
        const { plan, split, report } = await splitAndReport(builder, ITEMS);
        const worker = memoryProcess(server, 'worker', functions(runs));
        let writes = 0;
        let struck: string | undefined;
        worker.zk.loseNextReply(
          (op, path) => {
            if (!WRITE_OPS.has(op)) return false;
            // With an expiry (slow to recover from), only the protocol's own writes are struck.
            if (expireSession && !isSpawnWrite(plan, split, path)) return false;
            if (++writes !== faultAt) return false;
            struck = `${op} ${path.slice(plan.length)}`;
            return true;
          },
          { expireSession },
        );
        const pool = worker.zkPlan.startWorkers(PARENT, { count: 2, backoff: FAST_BACKOFF });
        await worker.zkPlan
          .waitForCompletion(plan, { timeoutMs: 30_000 })
          .catch((error: unknown) => {
            throw new Error(
              `reply lost at write ${faultAt} (${struck}): ${String(error)}\n${server.dump(plan)}`,
            );
          });
        await pool.stop();

        const expected = squaresBetween(0, ITEMS);
        expect(await builder.zkPlan.getResult(split)).toBe(expected);
        expect(await builder.zkPlan.getResult(report)).toBe(expected);
        expect(new Set(runs.reported)).toEqual(new Set([expected]));
        expect(new Set(runs.spawned.map((paths) => paths.join(','))).size).toBe(1);
        expect(new Set(runs.sumTasks).size).toBe(1);
        const view = await builder.zkPlan.plans.describe(plan);
        expect(view.tasks.filter((task) => task.fn === 'sum')).toHaveLength(1);
        expect(view.tasks.filter((task) => task.fn === 'square')).toHaveLength(ITEMS);
        expect(view.tasks.every((task) => task.state === 'done')).toBe(true);
        if (struck === undefined) break;
        outcomes.push(`reply lost at write ${faultAt} (${struck}): split ran ${runs.splits}×`);
      }
      expect(outcomes.length).toBeGreaterThan(expireSession ? 10 : 20);
      console.log(outcomes.join('\n'));
    },
  );
});
