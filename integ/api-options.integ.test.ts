import { describe, expect, it } from 'vitest';
import {
  FunctionRegistry,
  InvalidArgumentError,
  UnserializableValueError,
  ZkPlan,
  call,
  type ConnectOptions,
} from '../src/index.js';
import { expectRejects, expectThrows } from '../test/support/expect-error.js';
import { useZooKeeper } from './support/zk-test-env.js';

const env = useZooKeeper('api-options');

describe('time options of the API are whole ms a Node timer can wait', () => {
  it.each([1500.5, 5e9, 3e9])(
    'waitForCompletion(plan, { timeoutMs: %d }) rejects with InvalidArgumentError, not a RangeError or an instant timeout',
    async (timeoutMs) => {
      const zkPlan = await env.zkPlan();
      const plan = await zkPlan.createPlan(env.root());
      await zkPlan.addTask(plan, call('nothing'));
      const error = await expectRejects(
        () => zkPlan.waitForCompletion(plan, { timeoutMs }),
        InvalidArgumentError,
      );
      expect(error.code).toBe('INVALID_ARGUMENT');
      expect(error.message).toBe(
        `Invalid timeoutMs: expected a whole number of ms from 1 to 2147483647, got ${timeoutMs}`,
      );
    },
  );

  it('addTask(…, { timeoutMs: 3e9 }) is refused before anything is written', async () => {
    const zkPlan = await env.zkPlan();
    const plan = await zkPlan.createPlan(env.root());
    const error = await expectRejects(
      () => zkPlan.addTask(plan, call('x'), [], { timeoutMs: 3e9 }),
      InvalidArgumentError,
    );
    expect(error.argument).toBe('timeoutMs');
    expect(await zkPlan.planCompleted(plan)).toBe(true);
  });

  it('createPlan and connect refuse fractional or oversized delays and timeouts', async () => {
    const zkPlan = await env.zkPlan();
    expect(
      (
        await expectRejects(
          () => zkPlan.createPlan(env.root(), { initialDelayMs: 0.5 }),
          InvalidArgumentError,
        )
      ).argument,
    ).toBe('initialDelayMs');
    expect(
      (
        await expectRejects(
          () => zkPlan.createPlan(env.root(), { maxDelayMs: 3e9 }),
          InvalidArgumentError,
        )
      ).argument,
    ).toBe('maxDelayMs');
    expect(
      (
        await expectRejects(
          () => ZkPlan.connect({ connect: env.connectString, sessionTimeoutMs: 3e9 }),
          InvalidArgumentError,
        )
      ).argument,
    ).toBe('sessionTimeoutMs');
    expect(
      expectThrows(
        () => zkPlan.startWorkers(env.root(), { drainTimeoutMs: 1.5 }),
        InvalidArgumentError,
      ).argument,
    ).toBe('drainTimeoutMs');
    expect(
      expectThrows(
        () => zkPlan.startWorkers(env.root(), { backoff: { max: 3e9 } }),
        InvalidArgumentError,
      ).argument,
    ).toBe('backoff.max');
  });
});

describe('a misspelled option key is refused with the known ones', () => {
  it('addTask, addTasks, createPlan, startWorkers, worker, connect and waitForCompletion', async () => {
    const zkPlan = await env.zkPlan();
    const plan = await zkPlan.createPlan(env.root());
    const cases: [() => Promise<unknown>, string][] = [
      [() => zkPlan.addTask(plan, call('x'), [], { keepResults: true } as never), 'keepResults'],
      [
        () => zkPlan.addTasks(plan, [{ task: call('x'), option: { keepResult: true } } as never]),
        'option',
      ],
      [
        () => zkPlan.addTasks(plan, [{ task: call('x'), options: { timeout: 5 } as never }]),
        'timeout',
      ],
      [() => zkPlan.createPlan(env.root(), { maxAttempt: 3 } as never), 'maxAttempt'],
      [async () => zkPlan.startWorkers(env.root(), { cout: 4 } as never), 'cout'],
      [
        async () => zkPlan.worker(env.root(), { count: 4 } as never, new AbortController().signal),
        'count',
      ],
      [
        () =>
          ZkPlan.connect({
            connect: env.connectString,
            sessionTimeout: 1,
          } as unknown as ConnectOptions),
        'sessionTimeout',
      ],
      [() => zkPlan.waitForCompletion(plan, { timeout: 5 } as never), 'timeout'],
    ];
    for (const [run, key] of cases) {
      const error = await expectRejects(run, InvalidArgumentError);
      expect(error.argument).toBe(key);
      expect(error.message).toMatch(/unknown option of .*; the known options are /);
    }
    expect(await zkPlan.planCompleted(plan)).toBe(true); // nothing was added
  });
});

describe('non-finite numbers in params and results', () => {
  it('NaN, Infinity, -Infinity and -0 reach the function and come back from getResult exactly', async () => {
    const functions = new FunctionRegistry().register('echo', (ctx) => [
      ...ctx.params,
      { nested: new Map([['k', Number.NEGATIVE_INFINITY]]) },
    ]);
    const zkPlan = await env.zkPlan({ functions });
    const parent = env.root();
    const plan = await zkPlan.createPlan(parent);
    const task = await zkPlan.addTask(
      plan,
      call('echo', Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, -0),
      [],
      { keepResult: true },
    );
    await zkPlan.markAsReady(plan);
    zkPlan.startWorkers(parent, { backoff: { initial: 10, max: 50 } });
    await zkPlan.waitForCompletion(plan, { timeoutMs: 20_000 });
    const result = (await zkPlan.getResult(task)) as unknown[];
    expect(result.slice(0, 4)).toEqual([
      Number.NaN,
      Number.POSITIVE_INFINITY,
      Number.NEGATIVE_INFINITY,
      -0,
    ]);
    expect(Object.is(result[3], -0)).toBe(true);
    expect((result[4] as { nested: Map<string, number> }).nested.get('k')).toBe(
      Number.NEGATIVE_INFINITY,
    );
    // Its history record keeps them exactly too.
    const [done] = (await zkPlan.plans.describe(plan)).tasks;
    expect(done?.state).toBe('done');
    expect(done?.params).toEqual([
      Number.NaN,
      Number.POSITIVE_INFINITY,
      Number.NEGATIVE_INFINITY,
      -0,
    ]);
    expect(Object.is(done?.params[3], -0)).toBe(true);
  });

  it('a NaN Map key, which superjson could lose, is refused naming where it is', () => {
    const error = expectThrows(
      () => call('echo', 1, new Map([[Number.NaN, 1]])),
      UnserializableValueError,
    );
    expect(error.message).toContain("params of call('echo')[1] has NaN as a key");
  });
});
