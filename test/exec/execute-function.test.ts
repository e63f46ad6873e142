import { rootContainer as container } from '../../src/di/container.js';
import { SILENT_LOGGER } from '../../src/logs/task-log-types.js';
import { describe, expect, it } from 'vitest';
import { ShellDisabledError, ShellExitError } from '../../src/errors/shell-errors.js';
import {
  InlineDisabledError,
  TaskExecutionError,
  UnknownFunctionError,
} from '../../src/errors/task-errors.js';
import { executeFunction, type ExecutionSettings } from '../../src/exec/execute-function.js';
import { FunctionRegistry } from '../../src/exec/function-registry.js';
import { inlineThreadStats } from '../../src/exec/inline-sandbox.js';
import type { TaskContext } from '../../src/exec/task-context.js';
import type { TaskDefinition } from '../../src/exec/task-spec.js';
import { decodeValue, encodeValue } from '../../src/serialization/codec.js';
import { expectRejects } from '../support/expect-error.js';

const PLAN = '/plans/plan-0000000001';
const TASK = `${PLAN}/task-0000000007`;

function makeCtx(): Omit<TaskContext<unknown[]>, 'params'> {
  return {
    container: container.createChildContainer(),
    task: TASK,
    plan: PLAN,
    workerId: 'host:1:1',
    signal: new AbortController().signal,
    log: SILENT_LOGGER,
    attempt: 1,
    // These functions never spawn nor hand over: a call would be a bug in the test.
    spawn: () => Promise.reject(new Error('ctx.spawn is not part of this test')),
    continueWith: () => {
      throw new Error('ctx.continueWith is not part of this test');
    },
    notYet: () => {
      throw new Error('ctx.notYet is not part of this test');
    },
  };
}

function settings(
  functions = new FunctionRegistry(),
  overrides: Partial<ExecutionSettings> = {},
): ExecutionSettings {
  return {
    functions,
    allowInline: false,
    inlineTimeoutMs: 1000,
    allowShell: false,
    shellKillGraceMs: 1000,
    maxResultBytes: 16 * 1024 * 1024,
    ...overrides,
  };
}

const inlineSettings = (inlineTimeoutMs = 1000): ExecutionSettings =>
  settings(new FunctionRegistry(), { allowInline: true, inlineTimeoutMs });

describe('executeFunction with a registered function', () => {
  it('passes ctx (params, task, plan, workerId, signal, container) and the args in order', async () => {
    const ctx = makeCtx();
    let seen: { ctx: TaskContext<readonly unknown[]>; args: unknown[] } | undefined;
    const functions = new FunctionRegistry().register(
      'record',
      (taskCtx: TaskContext<readonly unknown[]>, ...args: unknown[]) => {
        seen = { ctx: taskCtx, args };
        return 'done';
      },
    );
    const result = await executeFunction(
      { fn: 'record', params: ['p0', { p: 1 }] },
      ctx,
      ['a0', 2, [3]],
      settings(functions),
    );
    expect(result).toBe('done');
    expect(seen).toBeDefined();
    expect(seen?.args).toEqual(['a0', 2, [3]]);
    expect(seen?.ctx.params).toEqual(['p0', { p: 1 }]);
    expect(seen?.ctx.task).toBe(TASK);
    expect(seen?.ctx.plan).toBe(PLAN);
    expect(seen?.ctx.workerId).toBe('host:1:1');
    expect(seen?.ctx.signal).toBe(ctx.signal);
    expect(seen?.ctx.container).toBe(ctx.container);
  });

  it('lets the function resolve services from ctx.container', async () => {
    const ctx = makeCtx();
    ctx.container.register('greeting', { useValue: 'hello' });
    const functions = new FunctionRegistry().register(
      'greet',
      (taskCtx: TaskContext<[string]>) =>
        `${taskCtx.container.resolve<string>('greeting')} ${taskCtx.params[0]}`,
    );
    expect(
      await executeFunction({ fn: 'greet', params: ['world'] }, ctx, [], settings(functions)),
    ).toBe('hello world');
  });

  it('awaits an async result', async () => {
    const functions = new FunctionRegistry().register(
      'slowSum',
      async (_ctx, ...inputs: number[]) => {
        await new Promise((resolve) => setTimeout(resolve, 5));
        return inputs.reduce((a, b) => a + b, 0);
      },
    );
    const result = executeFunction(
      { fn: 'slowSum', params: [] },
      makeCtx(),
      [1, 2, 3],
      settings(functions),
    );
    expect(result).toBeInstanceOf(Promise);
    expect(await result).toBe(6);
  });

  it('wraps a thrown Error in TaskExecutionError with the task path, message and cause', async () => {
    const original = new RangeError('value out of range');
    const functions = new FunctionRegistry().register('fail', () => {
      throw original;
    });
    const error = await expectRejects(
      () => executeFunction({ fn: 'fail', params: [] }, makeCtx(), [], settings(functions)),
      TaskExecutionError,
    );
    expect(error.code).toBe('TASK_FAILED');
    expect(error.path).toBe(TASK);
    expect(error.message).toContain('value out of range');
    expect(error.message).toContain(TASK);
    expect(error.cause).toBe(original);
  });

  it('wraps an async rejection in TaskExecutionError', async () => {
    const original = new Error('async boom');
    const functions = new FunctionRegistry().register('failLater', async () => {
      await Promise.resolve();
      throw original;
    });
    const error = await expectRejects(
      () => executeFunction({ fn: 'failLater', params: [] }, makeCtx(), [], settings(functions)),
      TaskExecutionError,
    );
    expect(error.message).toContain('async boom');
    expect(error.cause).toBe(original);
  });

  it('wraps a thrown string in TaskExecutionError with a readable message', async () => {
    const functions = new FunctionRegistry().register('throwString', () => {
      // eslint-disable-next-line @typescript-eslint/only-throw-error
      throw 'plain string failure';
    });
    const error = await expectRejects(
      () => executeFunction({ fn: 'throwString', params: [] }, makeCtx(), [], settings(functions)),
      TaskExecutionError,
    );
    expect(error.code).toBe('TASK_FAILED');
    expect(error.path).toBe(TASK);
    expect(error.message).toContain('plain string failure');
    expect(error.cause).toBe('plain string failure');
  });

  it('wraps a thrown plain object in TaskExecutionError with a readable message', async () => {
    const thrown = { status: 503, reason: 'unavailable' };
    const functions = new FunctionRegistry().register('throwObject', () => {
      // eslint-disable-next-line @typescript-eslint/only-throw-error
      throw thrown;
    });
    const error = await expectRejects(
      () => executeFunction({ fn: 'throwObject', params: [] }, makeCtx(), [], settings(functions)),
      TaskExecutionError,
    );
    expect(error.message).toContain('unavailable');
    expect(error.message).toContain('503');
    expect(error.message).not.toContain('[object Object]');
    expect(error.cause).toBe(thrown);
  });

  it('uses the message of a thrown non-Error object that has one', async () => {
    const functions = new FunctionRegistry().register('throwMessage', () => {
      // eslint-disable-next-line @typescript-eslint/only-throw-error
      throw { message: 'custom failure text' };
    });
    const error = await expectRejects(
      () => executeFunction({ fn: 'throwMessage', params: [] }, makeCtx(), [], settings(functions)),
      TaskExecutionError,
    );
    expect(error.message).toContain('custom failure text');
  });

  it('gives each call its own copy of params', async () => {
    const definition: TaskDefinition = { fn: 'mutate', params: [1] };
    const functions = new FunctionRegistry().register(
      'mutate',
      (taskCtx: TaskContext<number[]>) => {
        taskCtx.params.push(99);
        return taskCtx.params.length;
      },
    );
    expect(await executeFunction(definition, makeCtx(), [], settings(functions))).toBe(2);
    expect(await executeFunction(definition, makeCtx(), [], settings(functions))).toBe(2);
    expect('params' in definition && definition.params).toEqual([1]);
  });

  it('throws UnknownFunctionError listing the registered names for an unknown function', async () => {
    const functions = new FunctionRegistry().register('sum', () => 0).register('concat', () => '');
    const error = await expectRejects(
      () => executeFunction({ fn: 'missing', params: [] }, makeCtx(), [], settings(functions)),
      UnknownFunctionError,
    );
    expect(error.code).toBe('UNKNOWN_FUNCTION');
    expect(error.functionName).toBe('missing');
    expect(error.path).toBe(TASK);
    expect(error.message).toContain('missing');
    expect(error.message).toContain('concat, sum');
  });

  it('says "none" when no function is registered', async () => {
    const error = await expectRejects(
      () => executeFunction({ fn: 'missing', params: [] }, makeCtx(), [], settings()),
      UnknownFunctionError,
    );
    expect(error.message).toContain('registered: none');
  });
});

describe('executeFunction with the built-in shell function', () => {
  it('runs it on a worker with allowShell, whatever the registry holds; its own errors come through unwrapped', async () => {
    const definition = {
      fn: 'shell',
      params: [{ command: 'echo "$1"', args: ['ok'], shell: true }],
    };
    const shellOn = settings(
      new FunctionRegistry().register('other', () => 0),
      { allowShell: true },
    );
    expect(await executeFunction(definition, makeCtx(), [], shellOn)).toEqual({
      exitCode: 0,
      stdout: 'ok\n',
    });
    const error = await expectRejects(
      () =>
        executeFunction({ fn: 'shell', params: [{ command: 'exit 4' }] }, makeCtx(), [], shellOn),
      ShellExitError,
    );
    expect(error.exitCode).toBe(4);
  });

  it('fails with SHELL_DISABLED, uncharged, on a worker without allowShell, naming the task and the way to enable it', async () => {
    const error = await expectRejects(
      () =>
        executeFunction({ fn: 'shell', params: [{ command: 'true' }] }, makeCtx(), [], settings()),
      ShellDisabledError,
    );
    expect(error.code).toBe('SHELL_DISABLED');
    expect(error.charged).toBe(false);
    expect(error.message).toContain(TASK);
    expect(error.message).toContain('zk-plan worker --allow-shell');
  });
});

describe('executeFunction with an inline function', () => {
  it('throws InlineDisabledError when allowInline is false, without running the code', async () => {
    const source = '(ctx, box) => ({ ...box, ran: true })';
    const jobs = inlineThreadStats().jobs;
    const error = await expectRejects(
      () => executeFunction({ source }, makeCtx(), [{}], settings()),
      InlineDisabledError,
    );
    expect(error.code).toBe('INLINE_DISABLED');
    expect(error.path).toBe(TASK);
    expect(inlineThreadStats().jobs).toBe(jobs); // nothing was sent to a sandbox thread
    // The same source runs when inline code is allowed.
    expect(await executeFunction({ source }, makeCtx(), [{}], inlineSettings())).toEqual({
      ran: true,
    });
    expect(inlineThreadStats().jobs).toBe(jobs + 1);
  });

  it('runs the source with the args when allowInline is true', async () => {
    expect(
      await executeFunction(
        { source: '(ctx, a, b) => a * b + 1' },
        makeCtx(),
        [6, 7],
        inlineSettings(),
      ),
    ).toBe(43);
  });

  it('exposes ctx.params, ctx.task, ctx.plan and ctx.workerId, but no container', async () => {
    const result = await executeFunction(
      {
        source:
          '(ctx) => ({ params: ctx.params, task: ctx.task, plan: ctx.plan, workerId: ctx.workerId, container: typeof ctx.container })',
      },
      makeCtx(),
      [],
      inlineSettings(),
    );
    expect(result).toEqual({
      params: [],
      task: TASK,
      plan: PLAN,
      workerId: 'host:1:1',
      container: 'undefined',
    });
  });

  it('runs a function expression and awaits an async one', async () => {
    expect(
      await executeFunction(
        { source: 'function (ctx, x) { return x + "!"; }' },
        makeCtx(),
        ['hi'],
        inlineSettings(),
      ),
    ).toBe('hi!');
    expect(
      await executeFunction(
        { source: 'async (ctx, x) => { await null; return x * 2; }' },
        makeCtx(),
        [21],
        inlineSettings(),
      ),
    ).toBe(42);
  });

  it.each([
    '() => process.exit(3)',
    '() => process.env',
    '() => require("node:fs").readFileSync("/etc/passwd", "utf8")',
    '() => require',
  ])(
    'fails with TaskExecutionError when inline code touches process or require: %s',
    async (source) => {
      const error = await expectRejects(
        () => executeFunction({ source }, makeCtx(), [], inlineSettings()),
        TaskExecutionError,
      );
      expect(error.code).toBe('TASK_FAILED');
      expect(error.path).toBe(TASK);
      expect(error.message).toMatch(/process|require/);
    },
  );

  it('wraps an error thrown by inline code in TaskExecutionError', async () => {
    const error = await expectRejects(
      () =>
        executeFunction(
          { source: '() => { throw new TypeError("inline broke"); }' },
          makeCtx(),
          [],
          inlineSettings(),
        ),
      TaskExecutionError,
    );
    expect(error.message).toContain('inline broke');
  });

  it('wraps a string thrown by inline code in TaskExecutionError with a readable message', async () => {
    const error = await expectRejects(
      () =>
        executeFunction(
          { source: '() => { throw "inline string"; }' },
          makeCtx(),
          [],
          inlineSettings(),
        ),
      TaskExecutionError,
    );
    expect(error.message).toContain('inline string');
  });

  it('fails with TaskExecutionError on a syntax error in the source', async () => {
    await expectRejects(
      () => executeFunction({ source: '() => {' }, makeCtx(), [], inlineSettings()),
      TaskExecutionError,
    );
  });

  it('stops an infinite loop after inlineTimeoutMs with TaskExecutionError', async () => {
    await executeFunction({ source: '() => 0' }, makeCtx(), [], inlineSettings()); // a started thread: starting one is not part of the limit
    const started = Date.now();
    const error = await expectRejects(
      () =>
        executeFunction(
          { source: '() => { while (true) {} }' },
          makeCtx(),
          [],
          inlineSettings(100),
        ),
      TaskExecutionError,
    );
    expect(error.code).toBe('TASK_FAILED');
    expect(error.message).toMatch(/timed out after 100 ms/i);
    expect(Date.now() - started).toBeLessThan(3000);
  }, 15_000);

  it('returns a Map and a Date that round-trip through encodeValue', async () => {
    const result = await executeFunction(
      {
        source:
          '(ctx, n) => new Map([["when", new Date(n)], ["tags", new Set(["a", "b"])], ["big", 10n ** 20n]])',
      },
      makeCtx(),
      [86_400_000],
      inlineSettings(),
    );
    const decoded = decodeValue(TASK, encodeValue(result, 'result'));
    expect(decoded).toBeInstanceOf(Map);
    const map = decoded as Map<string, unknown>;
    expect(map.get('when')).toBeInstanceOf(Date);
    expect((map.get('when') as Date).toISOString()).toBe('1970-01-02T00:00:00.000Z');
    expect(map.get('tags')).toEqual(new Set(['a', 'b']));
    expect(map.get('big')).toBe(10n ** 20n);
  });

  it('returns a Date that round-trips through encodeValue', async () => {
    const result = await executeFunction(
      { source: '() => new Date(Date.UTC(2020, 0, 2))' },
      makeCtx(),
      [],
      inlineSettings(),
    );
    const decoded = decodeValue(TASK, encodeValue(result, 'result'));
    expect(decoded).toBeInstanceOf(Date);
    expect((decoded as Date).toISOString()).toBe('2020-01-02T00:00:00.000Z');
  });
});
