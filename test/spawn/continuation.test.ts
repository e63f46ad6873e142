/**
 * `ctx.continueWith` over the in-memory ZooKeeper: a task hands its result over to a task it makes,
 * and its dependents get that task's result as its own. A map/reduce over a runtime list, a
 * recursive split nested many levels deep on a single worker loop (nothing waits on children), the
 * history and status of a hand-over, a continuation that fails for good, what a run that hands
 * over differently from an earlier one gets, cycles, a forged record, and bad input. Crashes and
 * lost replies at each write: continuation-faults.test.ts.
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
import { FAST_BACKOFF, memoryProcess } from '../support/memory-plan.js';
import {
  PARENT,
  functions,
  newRuns,
  splitAndReport,
  squaresBetween,
} from './continuation-fixture.js';

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
