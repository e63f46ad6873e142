/**
 * Priorities: the pure choice (src/worker/priority.ts) and the order in which worker loops take
 * tasks over the in-memory ZooKeeper: within a plan by the tasks' own priorities, across plans by
 * the plans', a task's own over its plan's, and the raw layout (no priority) as 0.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../../src/errors/usage-errors.js';
import { FunctionRegistry } from '../../src/exec/function-registry.js';
import type { TaskContext } from '../../src/exec/task-context.js';
import { call } from '../../src/exec/task-spec.js';
import { MemoryZooKeeper } from '../../src/testing/index.js';
import { mayOutrank, pickHighest } from '../../src/worker/priority.js';
import { FAST_BACKOFF, memoryProcess, type MemoryProcess } from '../support/memory-plan.js';
import { expectRejects } from '../support/expect-error.js';

const PARENT = '/plans';

describe('pickHighest', () => {
  it('takes an item of the highest priority, at random among equals', () => {
    const items = [
      { name: 'a', priority: 1 },
      { name: 'b', priority: 5 },
      { name: 'c', priority: 5 },
      { name: 'd', priority: -2 },
    ];
    expect(
      pickHighest(
        items,
        (item) => item.priority,
        () => 0,
      )?.name,
    ).toBe('b');
    expect(
      pickHighest(
        items,
        (item) => item.priority,
        () => 0.99,
      )?.name,
    ).toBe('c');
    expect(
      pickHighest(
        [],
        () => 0,
        () => 0,
      ),
    ).toBeUndefined();
    expect(
      pickHighest(
        [{ name: 'only', priority: -7 }],
        (item) => item.priority,
        () => 0.5,
      )?.name,
    ).toBe('only');
  });
});

describe('mayOutrank', () => {
  it('an unlisted index may hold a higher task when its plan ranks higher, or its tasks have their own priorities, or nothing is at hand', () => {
    expect(mayOutrank({ priority: 0, taskPriorities: false }, 0)).toBe(false);
    expect(mayOutrank({ priority: 3, taskPriorities: false }, 2)).toBe(true);
    expect(mayOutrank({ priority: 3, taskPriorities: false }, 3)).toBe(false);
    expect(mayOutrank({ priority: -1, taskPriorities: true }, 10)).toBe(true);
    expect(mayOutrank({ priority: -1, taskPriorities: false }, undefined)).toBe(true);
  });
});

describe('priorities over the in-memory ZooKeeper', () => {
  const processes: MemoryProcess[] = [];
  afterEach(async () => {
    await Promise.all(processes.splice(0).map(({ zkPlan }) => zkPlan.close()));
  });

  function recorder(order: string[]): FunctionRegistry {
    return new FunctionRegistry().register('record', (ctx: TaskContext<unknown[]>) => {
      order.push(String(ctx.params[0]));
      return ctx.params[0];
    });
  }

  it('one loop runs 50 runnable tasks of mixed priorities in non-increasing priority order', async () => {
    const server = new MemoryZooKeeper();
    const order: string[] = [];
    const proc = memoryProcess(server, 'p', recorder(order));
    processes.push(proc);
    const plan = await proc.zkPlan.createPlan(PARENT);
    const priorityOf = new Map<string, number>();
    const tasks = Array.from({ length: 50 }, (_, index) => {
      const priority = ((index * 37) % 11) - 5; // -5…5, shuffled
      priorityOf.set(`t${index}`, priority);
      return { task: call('record', `t${index}`), options: { priority } };
    });
    await proc.zkPlan.addTasks(plan, tasks);
    await proc.zkPlan.markAsReady(plan);
    proc.zkPlan.startWorkers(PARENT, { count: 1, backoff: FAST_BACKOFF, retention: false });
    await proc.zkPlan.waitForCompletion(plan, { timeoutMs: 10_000 });
    const priorities = order.map((label) => priorityOf.get(label) as number);
    expect(priorities).toHaveLength(50);
    expect(priorities).toEqual([...priorities].sort((a, b) => b - a));
  });

  it("takes every task of the higher plan before the lower plan's while both are runnable; a task's own priority beats its plan's", async () => {
    const server = new MemoryZooKeeper();
    const order: string[] = [];
    const proc = memoryProcess(server, 'p', recorder(order));
    processes.push(proc);
    const low = await proc.zkPlan.createPlan(PARENT, { priority: 1 });
    const high = await proc.zkPlan.createPlan(PARENT, { priority: 9 });
    await proc.zkPlan.addTasks(low, [
      ...Array.from({ length: 10 }, (_, index) => ({ task: call('record', `low${index}`) })),
      { task: call('record', 'urgent'), options: { priority: 100 } },
    ]);
    await proc.zkPlan.addTasks(
      high,
      Array.from({ length: 10 }, (_, index) => ({ task: call('record', `high${index}`) })),
    );
    await Promise.all([proc.zkPlan.markAsReady(low), proc.zkPlan.markAsReady(high)]);
    proc.zkPlan.startWorkers(PARENT, { count: 1, backoff: FAST_BACKOFF, retention: false });
    await Promise.all([
      proc.zkPlan.waitForCompletion(low, { timeoutMs: 10_000 }),
      proc.zkPlan.waitForCompletion(high, { timeoutMs: 10_000 }),
    ]);
    expect(order[0]).toBe('urgent');
    expect(order.slice(1, 11).every((label) => label.startsWith('high'))).toBe(true);
    expect(order.slice(11).every((label) => label.startsWith('low'))).toBe(true);
  });

  it('a dependent made runnable by its input is ranked by its own priority against what is already waiting', async () => {
    const server = new MemoryZooKeeper();
    const order: string[] = [];
    const proc = memoryProcess(server, 'p', recorder(order));
    processes.push(proc);
    const plan = await proc.zkPlan.createPlan(PARENT);
    const [first] = await proc.zkPlan.addTasks(plan, [
      { task: call('record', 'first'), options: { priority: 50 } },
    ]);
    await proc.zkPlan.addTasks(plan, [
      { task: call('record', 'next'), args: [first as string], options: { priority: 40 } },
      ...Array.from({ length: 5 }, (_, index) => ({
        task: call('record', `filler${index}`),
        options: { priority: 10 },
      })),
    ]);
    await proc.zkPlan.markAsReady(plan);
    proc.zkPlan.startWorkers(PARENT, { count: 1, backoff: FAST_BACKOFF, retention: false });
    await proc.zkPlan.waitForCompletion(plan, { timeoutMs: 10_000 });
    expect(order.slice(0, 2)).toEqual(['first', 'next']);
  });

  it('refuses a priority that is not a whole number, naming the option', async () => {
    const server = new MemoryZooKeeper();
    const proc = memoryProcess(server, 'p', recorder([]));
    processes.push(proc);
    expect(
      (
        await expectRejects(
          () => proc.zkPlan.createPlan(PARENT, { priority: 1.5 }),
          InvalidArgumentError,
        )
      ).argument,
    ).toBe('priority');
    const plan = await proc.zkPlan.createPlan(PARENT);
    expect(
      (
        await expectRejects(
          () => proc.zkPlan.addTask(plan, call('record', 'x'), [], { priority: Number.NaN }),
          InvalidArgumentError,
        )
      ).argument,
    ).toBe('priority');
  });
});
