/**
 * `ctx.spawn` over the in-memory ZooKeeper: a task that adds tasks to its own plan while it runs.
 * What it makes, that a re-run gets the same tasks back, what a run that asks for others gets, bad
 * input, and a crash of the spawning process before each of its writes (the process dies, its
 * session expires on the server, a second process finishes the plan): every crash point leaves the
 * plan completing with one set of spawned tasks, each run once, and the right merged result.
 */
import { describe, expect, it } from 'vitest';
import { PlanFailedError } from '../../src/errors/plan-errors.js';
import { InvalidArgumentError } from '../../src/errors/usage-errors.js';
import { FunctionRegistry } from '../../src/exec/function-registry.js';
import type { TaskContext } from '../../src/exec/task-context.js';
import { call } from '../../src/exec/task-spec.js';
import { MemoryZooKeeper } from '../../src/testing/index.js';
import { CrashScheduler, Victim, WRITE_OPS } from '../support/crash-scheduler.js';
import { FAST_BACKOFF, memoryProcess } from '../support/memory-plan.js';
import { committedBatchTakeover } from './committed-batch-takeover.js';
import { PARENT, functions, newRuns, runSplit, sumOfSquares } from './split-plan.js';

const MAX_CRASH_POINTS = 200;

describe('ctx.spawn', () => {
  it.each([0, 1, 500])(
    'a task spawns a task per item of a runtime list of %i and their merge: the merge gets every result, in order',
    async (count) => {
      const runs = newRuns();
      const server = new MemoryZooKeeper();
      const proc = memoryProcess(server, 'p', functions(runs));
      const { plan, split } = await runSplit(proc, count);
      const pool = proc.zkPlan.startWorkers(PARENT, { count: 4, backoff: FAST_BACKOFF });
      await proc.zkPlan.waitForCompletion(plan, { timeoutMs: 30_000 });
      await pool.stop();
      const sum = (await proc.zkPlan.getResult(split)) as string;
      expect(await proc.zkPlan.getResult(sum)).toBe(sumOfSquares(count));
      expect(runs.splits).toBe(1);
      expect(runs.sums).toBe(1);
      expect([...runs.squares.values()].every((ran) => ran === 1)).toBe(true);
      expect(runs.squares.size).toBe(count);
      // The plan counts the spawned tasks: the split, each square and the sum, all done.
      const status = await proc.zkPlan.plans.status(plan);
      expect(status.counts.done).toBe(count + 2);
      const keys = (await proc.zkPlan.plans.describe(plan)).tasks.flatMap((task) =>
        task.key === undefined ? [] : [task.key],
      );
      expect(keys.sort()).toEqual(
        Array.from({ length: count }, (_, item) => `square-${item}`).sort(),
      );
    },
  );

  it('a retry of the spawning task gets the tasks its first try spawned, and none is made twice', async () => {
    const runs = newRuns();
    let tries = 0;
    const registry = functions(runs).register('split-then-fail', async (ctx: TaskContext) => {
      tries += 1;
      const paths = await ctx.spawn([{ task: call('square', 7) }, { task: call('square', 8) }]);
      runs.spawned.push(paths);
      if (tries === 1) throw new Error('the first try fails after spawning');
      return paths;
    });
    const server = new MemoryZooKeeper();
    const proc = memoryProcess(server, 'p', registry);
    const plan = await proc.zkPlan.createPlan(PARENT, { initialDelayMs: 0 });
    await proc.zkPlan.addTask(plan, call('split-then-fail'));
    await proc.zkPlan.markAsReady(plan);
    const pool = proc.zkPlan.startWorkers(PARENT, { count: 2, backoff: FAST_BACKOFF });
    await proc.zkPlan.waitForCompletion(plan, { timeoutMs: 10_000 });
    await pool.stop();
    expect(tries).toBe(2);
    expect(runs.spawned).toHaveLength(2);
    expect(runs.spawned[1]).toEqual(runs.spawned[0]);
    expect(Object.fromEntries(runs.squares)).toEqual({ 7: 1, 8: 1 });
  });

  it('a run that asks its spawn call for other tasks than an earlier run recorded fails for good with SPAWN_MISMATCH', async () => {
    const runs = newRuns();
    let tries = 0;
    const registry = functions(runs).register('fickle', async (ctx: TaskContext) => {
      tries += 1;
      await ctx.spawn([{ task: call(tries === 1 ? 'square' : 'sum', 3) }]);
      if (tries === 1) throw new Error('the first try fails after spawning');
      return 'never';
    });
    const server = new MemoryZooKeeper();
    const proc = memoryProcess(server, 'p', registry);
    const plan = await proc.zkPlan.createPlan(PARENT, { initialDelayMs: 0 });
    const fickle = await proc.zkPlan.addTask(plan, call('fickle'));
    await proc.zkPlan.markAsReady(plan);
    const pool = proc.zkPlan.startWorkers(PARENT, { count: 2, backoff: FAST_BACKOFF });
    const failed = await proc.zkPlan.waitForCompletion(plan, { timeoutMs: 10_000 }).then(
      () => undefined,
      (error: unknown) => error,
    );
    await pool.stop();
    expect(failed).toBeInstanceOf(PlanFailedError);
    const view = await proc.zkPlan.plans.describe(plan);
    const task = view.tasks.find((entry) => entry.task === fickle);
    expect(task?.failure?.code).toBe('SPAWN_MISMATCH');
    expect(tries).toBe(2);
    expect(Object.fromEntries(runs.squares)).toEqual({ 3: 1 }); // the first run's task still ran
  });

  it('bad input to ctx.spawn fails the call with INVALID_ARGUMENT and writes nothing', async () => {
    const errors: unknown[] = [];
    const longName = 'f'.repeat(201);
    const registry = new FunctionRegistry()
      .register('bad', async (ctx: TaskContext) => {
        for (const tasks of [
          'not a list',
          [{ task: call('bad'), args: [0] }],
          [{ task: call('bad'), colour: 'red' }],
          [{ task: call('bad'), key: 'a', options: { key: 'b' } }],
          [{ task: call(longName) }], // longer than a record keeps
        ])
          errors.push(await ctx.spawn(tasks as never).catch((error: unknown) => error));
        return 'done';
      })
      .register(longName, () => 'never');
    const server = new MemoryZooKeeper();
    const proc = memoryProcess(server, 'p', registry);
    const plan = await proc.zkPlan.createPlan(PARENT);
    const bad = await proc.zkPlan.addTask(plan, call('bad'));
    const spawnRecords: string[] = [];
    server.onApplied = (event) => {
      if (event.op === 'create' && event.path.startsWith(`${bad}/spawn-`))
        spawnRecords.push(event.path);
    };
    await proc.zkPlan.markAsReady(plan);
    const pool = proc.zkPlan.startWorkers(PARENT, { backoff: FAST_BACKOFF });
    await proc.zkPlan.waitForCompletion(plan, { timeoutMs: 10_000 });
    await pool.stop();
    expect(errors).toHaveLength(5);
    for (const error of errors) expect(error).toBeInstanceOf(InvalidArgumentError);
    expect(spawnRecords).toEqual([]);
  });

  it('a spawn call made after the function returned (from a timer it left) is refused and writes nothing', async () => {
    let late: unknown;
    let announce = (): void => undefined;
    const refused = new Promise<void>((resolve) => {
      announce = resolve;
    });
    const registry = new FunctionRegistry()
      .register('leaves-a-timer', (ctx: TaskContext) => {
        setTimeout(() => {
          ctx.spawn([{ task: call('noop') }]).then(
            () => announce(),
            (error: unknown) => {
              late = error;
              announce();
            },
          );
        }, 0);
        return 'returned';
      })
      .register('noop', () => null);
    const server = new MemoryZooKeeper();
    const proc = memoryProcess(server, 'p', registry);
    const plan = await proc.zkPlan.createPlan(PARENT);
    await proc.zkPlan.addTask(plan, call('leaves-a-timer'));
    await proc.zkPlan.markAsReady(plan);
    const pool = proc.zkPlan.startWorkers(PARENT, { backoff: FAST_BACKOFF });
    await proc.zkPlan.waitForCompletion(plan, { timeoutMs: 10_000 });
    await refused;
    await pool.stop();
    expect(late).toBeInstanceOf(InvalidArgumentError);
    expect(server.exists(`${plan}/spawned`)).toBe(false);
    expect(server.children(`${plan}/history`)).toHaveLength(1);
  });
});

describe('ctx.spawn under crashes', () => {
  it("a run that finds a dead run's committed batch, its tasks already made ready by the workers, takes that batch: one set runs", async () => {
    await committedBatchTakeover();
  });

  it(
    'a crash of the spawning process before any of its writes: one set of spawned tasks, each run once, the right sum',
    { timeout: 600_000 },
    async () => {
      const outcomes: string[] = [];
      const ITEMS = 3;
      for (let crashAt = 1; crashAt <= MAX_CRASH_POINTS; crashAt++) {
        const runs = newRuns();
        const scheduler = new CrashScheduler();
        const server = new MemoryZooKeeper({ scheduler });
        const builder = memoryProcess(server, 'builder', functions(runs));
        const { plan, split } = await runSplit(builder, ITEMS);
        const doomed = memoryProcess(server, 'doomed', functions(runs));
        const victim = new Victim(server, doomed.zk, crashAt);
        scheduler.victim = victim;
        const doomedPool = doomed.zkPlan.startWorkers(PARENT, { backoff: FAST_BACKOFF });
        await Promise.race([
          victim.crashed,
          builder.zkPlan.waitForCompletion(plan, { timeoutMs: 10_000 }),
        ]);
        // No crash from here on: a write of the pool's stop is not part of the plan.
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

        const sum = (await survivor.zkPlan.getResult(split)) as string;
        expect(await survivor.zkPlan.getResult(sum)).toBe(sumOfSquares(ITEMS));
        // One set: every run of split got the same paths, and only those tasks ran. A function whose
        // worker died before its result was stored runs again (at least once, as every task).
        expect(new Set(runs.spawned.map((paths) => paths.join(','))).size).toBe(1);
        const [spawned = []] = runs.spawned;
        expect(new Set(runs.squareTasks)).toEqual(new Set(spawned.slice(0, ITEMS)));
        expect([...runs.squares.keys()].sort()).toEqual([0, 1, 2]);
        const view = await survivor.zkPlan.plans.describe(plan);
        expect(view.tasks.filter((task) => task.fn === 'square')).toHaveLength(ITEMS);
        expect(view.tasks.every((task) => task.state === 'done')).toBe(true);
        outcomes.push(
          `crash before write ${crashAt}: split ran ${runs.splits}×, squares ${runs.squareTasks.length}×, sum ${runs.sums}×`,
        );
        if (!crashed) break;
      }
      // Every write of the claim, the spawn record, the batch, the record's paths and the rest was a crash point.
      expect(outcomes.length).toBeGreaterThan(20);
      expect(outcomes.at(-1)).toMatch(/split ran 1×, squares 3×, sum 1×/);
      console.log(outcomes.join('\n'));
    },
  );
});
