/** Plan specs: every problem checked before anything is written, and a spec submitted and run over the in-memory ZooKeeper. */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { PlanSpecError, type PlanSpecProblem } from '../../src/errors/spec-errors.js';
import { InvalidArgumentError } from '../../src/errors/usage-errors.js';
import { FunctionRegistry } from '../../src/exec/function-registry.js';
import type { TaskContext } from '../../src/exec/task-context.js';
import { checkPlanSpec, type PlanSpec } from '../../src/spec/plan-spec.js';
import { MemoryZooKeeper } from '../../src/testing/index.js';
import { FAST_BACKOFF, memoryProcess, type MemoryProcess } from '../support/memory-plan.js';
import { expectRejects, expectThrows } from '../support/expect-error.js';

const PARENT = '/plans';
const context = { registered: ['load', 'sum'], params: { date: '2026-11-22' } };

function problem(spec: unknown, ctx = context): { code: PlanSpecProblem; key: string | undefined } {
  const error = expectThrows(() => checkPlanSpec(spec, ctx), PlanSpecError);
  return { code: error.code, key: error.key };
}

describe('checkPlanSpec', () => {
  it('orders the tasks inputs first and fills $param placeholders at any depth', () => {
    const checked = checkPlanSpec(
      {
        tasks: {
          total: { fn: 'sum', inputs: ['a', 'b', 'a'] },
          a: { fn: 'load', params: [{ $param: 'date' }, { nested: [{ $param: 'date' }] }] },
          b: { fn: 'load', params: ['fixed'], options: { keepResult: true } },
        },
        options: { history: true },
      },
      context,
    );
    expect(checked.order).toEqual(['a', 'b', 'total']);
    expect(checked.tasks.get('a')?.params).toEqual(['2026-11-22', { nested: ['2026-11-22'] }]);
    expect(checked.options).toEqual({ history: true });
  });

  it('names the task and the problem, with a stable code for each', () => {
    expect(problem({ tasks: { a: { fn: 'load', inputs: ['nope'] } } })).toEqual({
      code: 'SPEC_UNKNOWN_INPUT',
      key: 'a',
    });
    expect(
      problem({
        tasks: {
          a: { fn: 'load', inputs: ['b'] },
          b: { fn: 'load', inputs: ['c'] },
          c: { fn: 'load', inputs: ['a'] },
          d: { fn: 'sum', inputs: ['a'] },
        },
      }).code,
    ).toBe('SPEC_CYCLE');
    expect(problem({ tasks: { a: { fn: 'missing' } } })).toEqual({
      code: 'SPEC_UNKNOWN_FUNCTION',
      key: 'a',
    });
    expect(problem({ tasks: { a: { fn: 'load', params: [() => 1] } } })).toEqual({
      code: 'SPEC_UNSERIALIZABLE',
      key: 'a',
    });
    expect(problem({ tasks: { a: { fn: 'load', params: [{ $param: 'region' }] } } })).toEqual({
      code: 'SPEC_MISSING_PARAM',
      key: 'a',
    });
    expect(problem({ tasks: { a: { fn: 'load', extra: 1 } } })).toEqual({
      code: 'SPEC_INVALID',
      key: 'a',
    });
    expect(problem({ tasks: {} })).toEqual({ code: 'SPEC_INVALID', key: undefined });
    expect(problem(null).code).toBe('SPEC_INVALID');
  });

  it('a cycle is reported as the keys that form it', () => {
    const error = expectThrows(
      () =>
        checkPlanSpec(
          {
            tasks: {
              x: { fn: 'load' },
              a: { fn: 'load', inputs: ['x', 'b'] },
              b: { fn: 'load', inputs: ['a'] },
              c: { fn: 'sum', inputs: ['b'] },
            },
          },
          context,
        ),
      PlanSpecError,
    );
    expect(error.message).toMatch(/cycle: (a ← b ← a|b ← a ← b)/);
  });

  it('checks function names against live workers when there are any', () => {
    expect(
      problem({ tasks: { a: { fn: 'load' } } }, {
        ...context,
        registered: [],
        live: [['sum'], ['other']],
      } as never),
    ).toEqual({
      code: 'SPEC_UNKNOWN_FUNCTION',
      key: 'a',
    });
    expect(
      checkPlanSpec(
        { tasks: { a: { fn: 'load' } } },
        { registered: [], live: [['sum'], []], params: {} },
      ).order,
    ).toEqual(['a']); // [] runs anything
  });
});

describe('checkPlanSpec: the built-in shell function', () => {
  const shellSpec = (params: unknown[]): unknown => ({ tasks: { dump: { fn: 'shell', params } } });

  it('is known to every registry, and its params are checked once placeholders are filled', () => {
    const checked = checkPlanSpec(shellSpec([{ command: 'pg_dump', args: [{ $param: 'db' }] }]), {
      registered: ['load'],
      params: { db: 'sales' },
    });
    expect(checked.tasks.get('dump')).toMatchObject({
      fn: 'shell',
      params: [{ command: 'pg_dump', args: ['sales'] }],
    });
    const bad = expectThrows(
      () =>
        checkPlanSpec(shellSpec([{ command: 'ls', args: [{ $param: 'n' }] }]), {
          registered: [],
          params: { n: 7 },
        }),
      PlanSpecError,
    );
    expect(bad).toMatchObject({ code: 'SPEC_PARAM_INVALID', key: 'dump' });
    expect(bad.message).toContain('its shell call is invalid: "args" must be an array of strings');
  });

  it('is refused while live workers run but none allows shell tasks, and accepted once one does', () => {
    const refused = expectThrows(
      () =>
        checkPlanSpec(shellSpec([{ command: 'ls' }]), {
          registered: [],
          live: [[]],
          liveShell: false,
          params: {},
        }),
      PlanSpecError,
    );
    expect(refused).toMatchObject({ code: 'SPEC_UNKNOWN_FUNCTION', key: 'dump' });
    expect(refused.message).toContain('zk-plan worker --allow-shell');
    expect(
      checkPlanSpec(shellSpec([{ command: 'ls' }]), {
        registered: [],
        live: [['load']],
        liveShell: true,
        params: {},
      }).order,
    ).toEqual(['dump']);
  });
});

describe('submitPlan', () => {
  const processes: MemoryProcess[] = [];
  afterEach(async () => {
    await Promise.all(processes.splice(0).map(({ zkPlan }) => zkPlan.close()));
  });

  const functions = (): FunctionRegistry =>
    new FunctionRegistry()
      .register(
        'load',
        (ctx: TaskContext<unknown[]>) => `${String(ctx.params[0])}:${String(ctx.params[1] ?? '')}`,
      )
      .register('join', (_ctx: TaskContext<unknown[]>, ...inputs: string[]) => inputs.join('|'));

  it('builds, readies and runs the spec; returns each task path by key', async () => {
    const proc = memoryProcess(new MemoryZooKeeper(), 'a', functions());
    processes.push(proc);
    proc.zkPlan.startWorkers(PARENT, { count: 2, backoff: FAST_BACKOFF, retention: false });
    const spec: PlanSpec = {
      tasks: {
        report: { fn: 'join', inputs: ['eu', 'us', 'eu'], options: { keepResult: true } },
        eu: { fn: 'load', params: ['eu', { $param: 'date' }] },
        us: { fn: 'load', params: ['us', { $param: 'date' }] },
      },
    };
    const { plan, tasks } = await proc.zkPlan.submitPlan(PARENT, spec, {
      params: { date: '2026-11-22' },
    });
    expect(Object.keys(tasks).sort()).toEqual(['eu', 'report', 'us']);
    await proc.zkPlan.waitForCompletion(plan, { timeoutMs: 10_000 });
    expect(await proc.zkPlan.getResult(tasks['report'] as string)).toBe(
      'eu:2026-11-22|us:2026-11-22|eu:2026-11-22',
    );
  });

  it('writes nothing when the spec has a problem (a bad option of one task included)', async () => {
    const server = new MemoryZooKeeper();
    const proc = memoryProcess(server, 'a', functions());
    processes.push(proc);
    await expectRejects(
      () => proc.zkPlan.submitPlan(PARENT, { tasks: { a: { fn: 'load', inputs: ['ghost'] } } }),
      PlanSpecError,
    );
    const bad = await expectRejects(
      () =>
        proc.zkPlan.submitPlan(PARENT, {
          tasks: { a: { fn: 'load', options: { timeoutMs: 1.5 } } },
        }),
      PlanSpecError,
    );
    expect(bad).toMatchObject({ code: 'SPEC_INVALID', key: 'a' });
    expect(server.exists(PARENT)).toBe(false);
  });

  it('refuses a function nothing vouches for (no registry here, no live worker there) unless allowUnknownFunctions; a live worker vouches', async () => {
    const server = new MemoryZooKeeper();
    const submitter = memoryProcess(server, 'submitter'); // registers nothing
    processes.push(submitter);
    const spec = { tasks: { report: { fn: 'report' } } };
    const refused = await expectRejects(
      () => submitter.zkPlan.submitPlan(PARENT, spec),
      PlanSpecError,
    );
    expect(refused).toMatchObject({ code: 'SPEC_UNKNOWN_FUNCTION', key: 'report' });
    expect(refused.message).toContain('nothing knows "report"');
    expect(server.exists(PARENT)).toBe(false);
    await expectRejects(
      () => submitter.zkPlan.submitPlan(PARENT, spec, { allowUnknownFunctions: 'yes' as never }),
      InvalidArgumentError,
    );

    const allowed = await submitter.zkPlan.submitPlan(PARENT, spec, {
      allowUnknownFunctions: true,
    });
    expect(Object.keys(allowed.tasks)).toEqual(['report']);

    // A live worker of the parent that registers it vouches for it; one that does not refuses as before.
    const worker = memoryProcess(
      server,
      'worker',
      new FunctionRegistry().register('report', () => 'done'),
    );
    processes.push(worker);
    worker.zkPlan.startWorkers(PARENT, { count: 1, backoff: FAST_BACKOFF, retention: false });
    await vi.waitFor(async () =>
      expect(await submitter.zkPlan.listWorkers(PARENT)).toHaveLength(1),
    );
    const vouched = await submitter.zkPlan.submitPlan(PARENT, spec);
    await submitter.zkPlan.waitForCompletion(vouched.plan, { timeoutMs: 10_000 });
    const other = await expectRejects(
      () => submitter.zkPlan.submitPlan(PARENT, { tasks: { load: { fn: 'load' } } }),
      PlanSpecError,
    );
    expect(other.message).toBe(
      'Plan spec, task "load": no live worker of the parent registers "load"',
    );
  });
});
