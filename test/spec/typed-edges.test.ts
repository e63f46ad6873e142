/**
 * Typed edges: functions registered with Standard Schemas (zod and valibot here). At submit: arity,
 * param values and (where both ends expose JSON Schema, as zod does) edge types, before anything is
 * written; at run time: params and inputs before the function runs, the result before it is
 * stored, a mismatch failing the task for good with SCHEMA_MISMATCH.
 */
import * as v from 'valibot';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { PlanSpecError } from '../../src/errors/spec-errors.js';
import { InvalidArgumentError } from '../../src/errors/usage-errors.js';
import { FunctionRegistry } from '../../src/exec/function-registry.js';
import type { TaskContext } from '../../src/exec/task-context.js';
import { call } from '../../src/exec/task-spec.js';
import type { PlanSpec } from '../../src/spec/plan-spec.js';
import { MemoryZooKeeper } from '../../src/testing/index.js';
import { expectRejects, expectThrows } from '../support/expect-error.js';
import { FAST_BACKOFF, memoryProcess, type MemoryProcess } from '../support/memory-plan.js';

const PARENT = '/plans';

/** Functions typed with zod (`z.*`) and valibot (`v.*`); `ran` records each call. */
function typedFunctions(ran: string[]): FunctionRegistry {
  return new FunctionRegistry()
    .register(
      'region',
      (ctx: TaskContext<[string]>) => {
        ran.push(`region ${ctx.params[0]}`);
        return ctx.params[0];
      },
      { params: [z.string().min(2)], result: z.string() },
    )
    .register(
      'count',
      (ctx: TaskContext<[number]>) => {
        ran.push('count');
        return ctx.params[0];
      },
      { params: [z.number().int()], result: z.number().int() },
    )
    .register(
      'lying',
      () => {
        ran.push('lying');
        return 'not a number';
      },
      { result: z.number() },
    )
    .register(
      'double',
      (_ctx: TaskContext<[]>, n: number) => {
        ran.push(`double ${n}`);
        return n * 2;
      },
      { inputs: [z.number()], result: z.number() },
    )
    .register(
      'length',
      (_ctx: TaskContext<[]>, n: number) => {
        ran.push(`length ${n}`);
        return n;
      },
      { inputs: [z.string().transform((text) => text.length)] },
    )
    .register(
      'shout',
      (_ctx: TaskContext<[]>, text: string) => {
        ran.push(`shout ${text}`);
        return text.toUpperCase();
      },
      { inputs: [v.string()], result: v.string() },
    )
    .register(
      'greet',
      (ctx: TaskContext<[string]>) => {
        ran.push(`greet ${ctx.params[0]}`);
        return `hello ${ctx.params[0]}`;
      },
      { params: [v.pipe(v.string(), v.email())] },
    );
}

describe('typed edges', () => {
  const processes: MemoryProcess[] = [];
  afterEach(async () => {
    await Promise.all(processes.splice(0).map(({ zkPlan }) => zkPlan.close()));
  });

  function setUp(ran: string[]): MemoryProcess {
    const proc = memoryProcess(new MemoryZooKeeper(), 'a', typedFunctions(ran));
    processes.push(proc);
    return proc;
  }

  it('register refuses what is not a Standard Schema, naming the function', () => {
    const registry = new FunctionRegistry();
    const fn = (): number => 1;
    expect(
      expectThrows(
        () => registry.register('f', fn, { result: { parse: () => 1 } as never }),
        InvalidArgumentError,
      ).message,
    ).toContain("function 'f'");
    expect(
      expectThrows(
        () => registry.register('g', fn, { inputs: [z.number(), 3 as never] }),
        InvalidArgumentError,
      ).argument,
    ).toBe('schemas.inputs');
    expect(
      expectThrows(
        () => registry.register('h', fn, { output: z.number() } as never),
        InvalidArgumentError,
      ).message,
    ).toContain('unknown field "output"');
    expect(registry.names()).toEqual([]); // nothing half-registered
  });

  it('submit refuses a wrong number of params or inputs, an invalid param and a mismatched edge, writing nothing', async () => {
    const ran: string[] = [];
    const { zkPlan, zk } = setUp(ran);
    const refused = async (
      spec: PlanSpec,
      params: Record<string, unknown> = {},
    ): Promise<{ code: string; key: string | undefined; message: string }> => {
      const error = await expectRejects(
        () => zkPlan.submitPlan(PARENT, spec, { params }),
        PlanSpecError,
      );
      return { code: error.code, key: error.key, message: error.message };
    };
    // Arity, from zod and from valibot schemas.
    expect(
      await refused({
        tasks: { n: { fn: 'count', params: [1] }, d: { fn: 'double', inputs: ['n', 'n'] } },
      }),
    ).toMatchObject({
      code: 'SPEC_ARITY',
      key: 'd',
    });
    expect(await refused({ tasks: { s: { fn: 'shout' } } })).toMatchObject({
      code: 'SPEC_ARITY',
      key: 's',
      message: expect.stringContaining('takes 1 input(s)'),
    });
    expect(await refused({ tasks: { r: { fn: 'region', params: [] } } })).toMatchObject({
      code: 'SPEC_ARITY',
      key: 'r',
    });
    // Param values are known at submit: checked by each library's own schema.
    expect(
      await refused(
        { tasks: { r: { fn: 'region', params: [{ $param: 'region' }] } } },
        { region: 'x' },
      ),
    ).toMatchObject({
      code: 'SPEC_PARAM_INVALID',
      key: 'r',
      message: expect.stringContaining('param 1 of "region"'),
    });
    expect(
      await refused({ tasks: { g: { fn: 'greet', params: ['not an address'] } } }),
    ).toMatchObject({ code: 'SPEC_PARAM_INVALID', key: 'g' });
    // An edge whose ends both expose JSON Schema (zod): a string result into a number input.
    expect(
      await refused({
        tasks: { r: { fn: 'region', params: ['eu'] }, d: { fn: 'double', inputs: ['r'] } },
      }),
    ).toMatchObject({
      code: 'SPEC_EDGE_TYPE',
      key: 'd',
      message: expect.stringContaining(
        'input 1 comes from "r", whose function "region" returns string, but "double" takes number there',
      ),
    });
    expect(await zkPlan.plans.list(PARENT).catch(() => [])).toEqual([]);
    expect(zk.counts.writes).toBe(0);
    // An integer result fits a number input.
    const ok = await zkPlan.submitPlan(PARENT, {
      tasks: {
        n: { fn: 'count', params: [21] },
        d: { fn: 'double', inputs: ['n'], options: { keepResult: true } },
      },
    });
    zkPlan.startWorkers(PARENT, { count: 2, backoff: FAST_BACKOFF, retention: false });
    await zkPlan.waitForCompletion(ok.plan, { timeoutMs: 10_000 });
    expect(await zkPlan.getResult(ok.tasks['d'] as string)).toBe(42);
  });

  it('at run time an input that does not match fails the task for good before its function runs, naming the edge (zod and valibot)', async () => {
    const ran: string[] = [];
    const { zkPlan } = setUp(ran);
    // Built task by task, so submit's checks are not in the way: the worker's are what is tested.
    const plan = await zkPlan.createPlan(PARENT);
    const region = await zkPlan.addTask(plan, call('region', 'eu'));
    const doubled = await zkPlan.addTask(plan, call('double'), [region]);
    const counted = await zkPlan.addTask(plan, call('count', 7));
    const shouted = await zkPlan.addTask(plan, call('shout'), [counted]); // valibot: no JSON Schema, so only the worker sees it
    await zkPlan.markAsReady(plan);
    zkPlan.startWorkers(PARENT, { count: 2, backoff: FAST_BACKOFF, retention: false });
    await expect(zkPlan.waitForCompletion(plan, { timeoutMs: 10_000 })).rejects.toThrow();
    const status = await zkPlan.plans.status(plan);
    const failures = new Map(status.failed.map(({ task, failure }) => [task, failure]));
    expect(failures.get(doubled)).toMatchObject({
      code: 'SCHEMA_MISMATCH',
      retryable: false,
      attempts: 1,
    });
    expect(failures.get(doubled)?.message).toContain('its input 1 does not match');
    expect(failures.get(shouted)).toMatchObject({ code: 'SCHEMA_MISMATCH', retryable: false });
    expect(failures.get(shouted)?.message).toContain(
      `Task ${shouted} (function 'shout'): its input 1`,
    );
    expect(ran.filter((entry) => entry.startsWith('double') || entry.startsWith('shout'))).toEqual(
      [],
    );
  });

  it('submit lets a coercing input take another type (z.coerce), and refuses a param schema that throws, naming the task', async () => {
    const ran: string[] = [];
    const never = {
      '~standard': {
        version: 1 as const,
        vendor: 'test',
        validate: (): never => {
          throw new Error('schema bug');
        },
      },
    };
    const functions = typedFunctions(ran)
      .register('toNumber', (_ctx: TaskContext<[]>, n: number) => n + 1, {
        inputs: [z.coerce.number()],
        result: z.number(),
      })
      .register('broken', () => 1, { params: [never] });
    const proc = memoryProcess(new MemoryZooKeeper(), 'a', functions);
    processes.push(proc);
    const { zkPlan } = proc;
    const error = await expectRejects(
      () => zkPlan.submitPlan(PARENT, { tasks: { b: { fn: 'broken', params: [1] } } }),
      PlanSpecError,
    );
    expect(error).toMatchObject({ code: 'SPEC_PARAM_INVALID', key: 'b' });
    expect(error.message).toContain('the schema of param 1 of "broken" failed: schema bug');
    // 'region' returns a string; z.coerce.number() declares number but takes '41'.
    const { plan, tasks } = await zkPlan.submitPlan(PARENT, {
      tasks: {
        r: { fn: 'region', params: ['41'] },
        n: { fn: 'toNumber', inputs: ['r'], options: { keepResult: true } },
      },
    });
    zkPlan.startWorkers(PARENT, { count: 1, backoff: FAST_BACKOFF, retention: false });
    await zkPlan.waitForCompletion(plan, { timeoutMs: 10_000 });
    expect(await zkPlan.getResult(tasks['n'] as string)).toBe(42);
  });

  it('at run time a param that does not match, or the wrong number of them, fails the task for good; a schema that never settles is cut by the task timeout', async () => {
    const ran: string[] = [];
    const hanging = {
      '~standard': {
        version: 1 as const,
        vendor: 'test',
        validate: (): Promise<never> => new Promise<never>(() => undefined),
      },
    };
    const functions = typedFunctions(ran).register('hangs', () => ran.push('hangs'), {
      params: [hanging],
    });
    const proc = memoryProcess(new MemoryZooKeeper(), 'a', functions);
    processes.push(proc);
    const { zkPlan } = proc;
    const plan = await zkPlan.createPlan(PARENT, { maxAttempts: 1 });
    const short = await zkPlan.addTask(plan, call('region', 'x'));
    const extra = await zkPlan.addTask(plan, call('count', 1, 2));
    const hangs = await zkPlan.addTask(plan, call('hangs', 1), [], { timeoutMs: 100 });
    await zkPlan.markAsReady(plan);
    zkPlan.startWorkers(PARENT, { count: 2, backoff: FAST_BACKOFF, retention: false });
    await expect(zkPlan.waitForCompletion(plan, { timeoutMs: 10_000 })).rejects.toThrow();
    const failures = new Map(
      (await zkPlan.plans.status(plan)).failed.map(({ task, failure }) => [task, failure]),
    );
    expect(failures.get(short)).toMatchObject({ code: 'SCHEMA_MISMATCH', retryable: false });
    expect(failures.get(short)?.message).toContain('its param 1 does not match');
    expect(failures.get(extra)?.message).toContain('its params do not match');
    expect(failures.get(extra)?.message).toContain('expected 1 param(s), got 2');
    expect(failures.get(hangs)).toMatchObject({ code: 'TASK_TIMEOUT' });
    expect(ran).toEqual([]);
  });

  it('a schema that throws is charged like a function that throws, and retried', async () => {
    const ran: string[] = [];
    const server = new MemoryZooKeeper();
    const throwing = {
      '~standard': {
        version: 1 as const,
        vendor: 'test',
        validate: (): never => {
          throw new Error('schema bug');
        },
      },
    };
    const functions = new FunctionRegistry().register('f', () => ran.push('f'), {
      params: [throwing],
    });
    const proc = memoryProcess(server, 'a', functions);
    processes.push(proc);
    const plan = await proc.zkPlan.createPlan(PARENT, { maxAttempts: 2, initialDelayMs: 1 });
    const task = await proc.zkPlan.addTask(plan, call('f', 1));
    await proc.zkPlan.markAsReady(plan);
    proc.zkPlan.startWorkers(PARENT, { count: 1, backoff: FAST_BACKOFF, retention: false });
    await expect(proc.zkPlan.waitForCompletion(plan, { timeoutMs: 10_000 })).rejects.toThrow();
    const [failed] = (await proc.zkPlan.plans.status(plan)).failed;
    expect(failed).toMatchObject({
      task,
      failure: { code: 'TASK_FAILED', retryable: false, attempts: 2 },
    });
    expect(failed?.failure?.message).toContain("the schema of its param 1 ('f') threw: schema bug");
    expect(ran).toEqual([]);
  });

  it('at run time a result that does not match fails its task before it is handed on; a schema that transforms hands on its output', async () => {
    const ran: string[] = [];
    const { zkPlan } = setUp(ran);
    const plan = await zkPlan.createPlan(PARENT);
    const lying = await zkPlan.addTask(plan, call('lying'));
    const after = await zkPlan.addTask(plan, call('double'), [lying]);
    const region = await zkPlan.addTask(plan, call('region', 'north'));
    const length = await zkPlan.addTask(plan, call('length'), [region], { keepResult: true });
    await zkPlan.markAsReady(plan);
    zkPlan.startWorkers(PARENT, { count: 2, backoff: FAST_BACKOFF, retention: false });
    await expect(zkPlan.waitForCompletion(plan, { timeoutMs: 10_000 })).rejects.toThrow();
    const status = await zkPlan.plans.status(plan);
    expect(status.failed).toEqual([
      { task: lying, failure: expect.objectContaining({ code: 'SCHEMA_MISMATCH' }) },
    ]);
    expect(status.failed[0]?.failure?.message).toContain('its result does not match');
    expect(status.blocked.map(({ task }) => task)).toEqual([after]);
    expect(await zkPlan.getResult(length)).toBe(5); // 'north' through z.string().transform(length)
    expect(ran).toContain('length 5');
    expect(ran.filter((entry) => entry.startsWith('double'))).toEqual([]);
  });
});
