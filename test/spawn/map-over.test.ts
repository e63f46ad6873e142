/**
 * Map/reduce written as options (`addTask(…, { map, reduce })`, a spec's `map` and `reduce`) over
 * the in-memory ZooKeeper: a task's list becomes a task per item and a reduce over their results,
 * in list order, whose result is the task's own. With and without `reduce`, from a spec, keys of
 * the made tasks, a result that is not a list, and the checks of the options.
 */
import { describe, expect, it } from 'vitest';
import { PlanFailedError } from '../../src/errors/plan-errors.js';
import { PlanSpecError } from '../../src/errors/spec-errors.js';
import { InvalidArgumentError } from '../../src/errors/usage-errors.js';
import { FunctionRegistry } from '../../src/exec/function-registry.js';
import type { TaskContext } from '../../src/exec/task-context.js';
import { call } from '../../src/exec/task-spec.js';
import { renderPlanView } from '../../src/cli/commands/show.js';
import { MemoryZooKeeper } from '../../src/testing/index.js';
import { FAST_BACKOFF, memoryProcess, type MemoryProcess } from '../support/memory-plan.js';

const PARENT = '/map';

function functions(): FunctionRegistry {
  return new FunctionRegistry()
    .register('list', (ctx: TaskContext<[number]>) =>
      Array.from({ length: ctx.params[0] }, (_, item) => item),
    )
    .register('not-a-list', () => ({ items: [1, 2] }))
    .register('scale', (ctx: TaskContext<[number, number]>) => ctx.params[0] * ctx.params[1])
    .register('sum', (_ctx, ...parts: number[]) => parts.reduce((total, part) => total + part, 0))
    .register(
      'label',
      (ctx: TaskContext<[string]>, ...parts: number[]) =>
        `${ctx.params[0]}=${parts.reduce((total, part) => total + part, 0)}`,
    )
    .register('echo', (_ctx, value: unknown) => value);
}

async function run(proc: MemoryProcess, plan: string): Promise<unknown> {
  const pool = proc.zkPlan.startWorkers(PARENT, { count: 3, backoff: FAST_BACKOFF });
  try {
    return await proc.zkPlan.waitForCompletion(plan, { timeoutMs: 20_000 }).then(
      () => undefined,
      (error: unknown) => error,
    );
  } finally {
    await pool.stop();
  }
}

describe('map and reduce options', () => {
  it('a list of 50 is mapped over `scale` (the item first, then its params) and reduced by `label`: the dependent gets the reduce, keyed tasks follow the key', async () => {
    const proc = memoryProcess(new MemoryZooKeeper(), 'p', functions());
    const plan = await proc.zkPlan.createPlan(PARENT);
    const numbers = await proc.zkPlan.addTask(plan, call('list', 50), [], {
      key: 'numbers',
      keepResult: true,
      map: { fn: 'scale', params: [10] },
      reduce: { fn: 'label', params: ['total'], options: { maxAttempts: 2 } },
    });
    const echo = await proc.zkPlan.addTask(plan, call('echo'), [numbers], { keepResult: true });
    await proc.zkPlan.markAsReady(plan);
    expect(await run(proc, plan)).toBeUndefined();
    const expected = `total=${10 * ((49 * 50) / 2)}`;
    expect(await proc.zkPlan.getResult(numbers)).toBe(expected);
    expect(await proc.zkPlan.getResult(echo)).toBe(expected);
    const view = await proc.zkPlan.plans.describe(plan);
    const keys = view.tasks.flatMap((task) => (task.key === undefined ? [] : [task.key]));
    expect(keys).toContain('numbers[0]');
    expect(keys).toContain('numbers[49]');
    expect(keys).toContain('numbers.reduce');
    expect(view.tasks.filter((task) => task.fn === 'scale')).toHaveLength(50);
    // `zk-plan show` names the continuation by its key.
    const numbersLine = renderPlanView(view, 100_000)
      .split('\n')
      .find((line) => line.startsWith('numbers '));
    expect(numbersLine).toContain('handed over to numbers.reduce: completed with its result');
  });

  it('without reduce, the task completes with the mapped results as a list, in list order', async () => {
    const proc = memoryProcess(new MemoryZooKeeper(), 'p', functions());
    const plan = await proc.zkPlan.createPlan(PARENT);
    const numbers = await proc.zkPlan.addTask(plan, call('list', 12), [], {
      keepResult: true,
      map: { fn: 'scale', params: [3] },
    });
    await proc.zkPlan.markAsReady(plan);
    expect(await run(proc, plan)).toBeUndefined();
    expect(await proc.zkPlan.getResult(numbers)).toEqual(
      Array.from({ length: 12 }, (_, item) => item * 3),
    );
  });

  it("a spec's task with map and reduce: its dependents get the reduce's result", async () => {
    const proc = memoryProcess(new MemoryZooKeeper(), 'p', functions());
    const { plan, tasks } = await proc.zkPlan.submitPlan(PARENT, {
      name: 'scaled',
      tasks: {
        numbers: {
          fn: 'list',
          params: [20],
          map: { fn: 'scale', params: [2] },
          reduce: { fn: 'sum' },
        },
        report: {
          fn: 'label',
          params: ['sum'],
          inputs: ['numbers'],
          options: { keepResult: true },
        },
      },
    });
    expect(await run(proc, plan)).toBeUndefined();
    expect(await proc.zkPlan.getResult(tasks['report'] as string)).toBe(`sum=${2 * 190}`);
  });

  it("a spec's map and reduce params take { $param } placeholders, filled at submit", async () => {
    const proc = memoryProcess(new MemoryZooKeeper(), 'p', functions());
    const { plan, tasks } = await proc.zkPlan.submitPlan(
      PARENT,
      {
        tasks: {
          numbers: {
            fn: 'list',
            params: [{ $param: 'count' }],
            map: { fn: 'scale', params: [{ $param: 'factor' }] },
            reduce: { fn: 'label', params: [{ $param: 'label' }] },
          },
        },
      },
      { params: { count: 10, factor: 3, label: 'tripled' } },
    );
    expect(await run(proc, plan)).toBeUndefined();
    expect(await proc.zkPlan.getResult(tasks['numbers'] as string)).toBe(`tripled=${3 * 45}`);
    await expect(
      proc.zkPlan.submitPlan(PARENT, {
        tasks: {
          numbers: { fn: 'list', params: [3], map: { fn: 'scale', params: [{ $param: 'nope' }] } },
        },
      }),
    ).rejects.toMatchObject({ code: 'SPEC_MISSING_PARAM' });
  });

  it('a mapping task whose function does not return a list fails for its try, naming what it got', async () => {
    const proc = memoryProcess(new MemoryZooKeeper(), 'p', functions());
    const plan = await proc.zkPlan.createPlan(PARENT, { maxAttempts: 1 });
    const task = await proc.zkPlan.addTask(plan, call('not-a-list'), [], {
      map: { fn: 'scale', params: [2] },
    });
    await proc.zkPlan.markAsReady(plan);
    expect(await run(proc, plan)).toBeInstanceOf(PlanFailedError);
    const failed = (await proc.zkPlan.plans.describe(plan)).tasks.find(
      (entry) => entry.task === task,
    );
    expect(failed?.failure?.code).toBe('INVALID_ARGUMENT');
    expect(failed?.failure?.message).toContain('must return a list (an array), got object');
  });

  it('refuses malformed map and reduce options, and a spec whose map names an unknown function, before anything is written', async () => {
    const proc = memoryProcess(new MemoryZooKeeper(), 'p', functions());
    const plan = await proc.zkPlan.createPlan(PARENT);
    for (const options of [
      { reduce: { fn: 'sum' } },
      { map: { fn: 'scale', colour: 'red' } },
      { map: { fn: '1bad' } },
      { map: { fn: 'scale', options: { keepResult: false } } },
      { map: 'scale' },
    ])
      await expect(
        proc.zkPlan.addTask(plan, call('list', 1), [], options as never),
      ).rejects.toBeInstanceOf(InvalidArgumentError);
    const spec = (map: unknown, reduce?: unknown) => ({
      tasks: { numbers: { fn: 'list', params: [1], map, ...(reduce ? { reduce } : {}) } },
    });
    const unknown = await proc.zkPlan
      .submitPlan(PARENT, spec({ fn: 'no-such-function' }) as never)
      .catch((error: unknown) => error);
    expect(unknown).toBeInstanceOf(PlanSpecError);
    expect(unknown).toMatchObject({ code: 'SPEC_UNKNOWN_FUNCTION' });
    const reduceOnly = await proc.zkPlan
      .submitPlan(PARENT, { tasks: { numbers: { fn: 'list', reduce: { fn: 'sum' } } } } as never)
      .catch((error: unknown) => error);
    expect(reduceOnly).toMatchObject({ code: 'SPEC_INVALID' });
    expect((await proc.zkPlan.plans.list(PARENT)).length).toBe(1); // only the plan made above
  });

  it.each([
    [
      'a map task with maxAttempts -5',
      { map: { fn: 'scale', options: { maxAttempts: -5 } } },
      'INVALID_ARGUMENT',
    ],
    [
      'a map task with timeoutMs "soon"',
      { map: { fn: 'scale', options: { timeoutMs: 'soon' } } },
      'INVALID_ARGUMENT',
    ],
    [
      'a reduce with concurrencyKey 42',
      { map: { fn: 'scale' }, reduce: { fn: 'sum', options: { concurrencyKey: 42 } } },
      'INVALID_ARGUMENT',
    ],
    ['a map function not registered', { map: { fn: 'not-registered' } }, 'UNKNOWN_FUNCTION'],
    [
      'a reduce function not registered',
      { map: { fn: 'scale' }, reduce: { fn: 'not-registered' } },
      'UNKNOWN_FUNCTION',
    ],
    [
      "a key with no room for its tasks' keys",
      { key: 'k'.repeat(200), map: { fn: 'scale' } },
      'INVALID_ARGUMENT',
    ],
  ])('addTask refuses %s before anything is written', async (_what, options, code) => {
    const server = new MemoryZooKeeper();
    const proc = memoryProcess(server, 'p', functions());
    const plan = await proc.zkPlan.createPlan(PARENT);
    await expect(
      proc.zkPlan.addTask(plan, call('list', 3), [], options as never),
    ).rejects.toMatchObject({ code });
    expect(server.children(plan).filter((name) => name.startsWith('task-'))).toEqual([]);
  });

  it("the built-in reduce's name cannot be registered", () => {
    expect(() => new FunctionRegistry().register('zk-plan:collect', () => [])).toThrow(
      InvalidArgumentError,
    );
  });
});
