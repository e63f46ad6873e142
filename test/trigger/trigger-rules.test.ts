/**
 * `skip(reason)` and trigger rules over the in-memory ZooKeeper: a skip propagates down the
 * default rule and reaches an `allDone` step as an outcome; an `allDone` clean-up after a failure
 * for good, reached through a task that failure blocks; a `oneFailed` branch; `anySucceeded`; the
 * plan's final state in each case; retryFailed after a clean-up took a failure; a task added later
 * that takes an input already failed; failFast; specs and bad input. Crashes and lost replies at
 * each write of the failure's hand-on: trigger-crashes.test.ts.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  FunctionRegistry,
  InvalidArgumentError,
  PermanentError,
  PlanFailedError,
  PlanSpecError,
  TaskSkippedError,
  call,
  skip,
  type InputOutcome,
} from '../../src/index.js';
import { MemoryZooKeeper } from '../../src/testing/index.js';
import { FAST_BACKOFF, memoryProcess, type MemoryProcess } from '../support/memory-plan.js';

const PARENT = '/plans';
const open: MemoryProcess[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map(({ zkPlan }) => zkPlan.close().catch(() => undefined)));
});

/** What each function was called with, by task key. */
type Calls = Map<string, unknown[][]>;

function functions(calls: Calls): FunctionRegistry {
  const seen = (ctx: { params: readonly unknown[] }, args: unknown[]): void => {
    const key = String(ctx.params[0]);
    calls.set(key, [...(calls.get(key) ?? []), args]);
  };
  return new FunctionRegistry()
    .register('value', (ctx, ...args: unknown[]) => {
      seen(ctx, args);
      return ctx.params[1];
    })
    .register('skips', (ctx, ...args: unknown[]) => {
      seen(ctx, args);
      return skip(String(ctx.params[1]));
    })
    .register('breaks', (ctx, ...args: unknown[]) => {
      seen(ctx, args);
      throw new PermanentError(`${String(ctx.params[0])} cannot work`, { code: 'DISK_FULL' });
    })
    .register('flaky', (ctx, ...args: unknown[]) => {
      seen(ctx, args);
      throw new Error(`${String(ctx.params[0])} failed`);
    })
    .register('report', (ctx, ...outcomes: InputOutcome[]) => {
      seen(ctx, outcomes);
      return outcomes.map((outcome) => outcome.status).join(',');
    })
    .register('forges', (ctx, ...args: unknown[]) => {
      seen(ctx, args);
      return { 'zk-plan:outcome': 'skipped', task: '/elsewhere', reason: 'forged' };
    });
}

async function start(
  settings: { failurePolicy?: 'continue' | 'failFast'; maxAttempts?: number } = {},
): Promise<{ proc: MemoryProcess; calls: Calls; plan: string }> {
  const calls: Calls = new Map();
  const proc = memoryProcess(new MemoryZooKeeper(), 'p', functions(calls));
  open.push(proc);
  const plan = await proc.zkPlan.createPlan(PARENT, { initialDelayMs: 1, ...settings });
  return { proc, calls, plan };
}

async function run(proc: MemoryProcess, plan: string): Promise<unknown> {
  const pool = proc.zkPlan.startWorkers(PARENT, { count: 3, backoff: FAST_BACKOFF });
  const ended = await proc.zkPlan
    .waitForCompletion(plan, { timeoutMs: 15_000 })
    .then(() => undefined)
    .catch((error: unknown) => error);
  await pool.stop();
  return ended;
}

describe('skip(reason)', () => {
  it('skips the task and, transitively, the tasks after it under the default rule; an allDone step gets the skip as an outcome', async () => {
    const { proc, calls, plan } = await start();
    const add = (fn: string, key: string, args: string[] = [], options = {}) =>
      proc.zkPlan.addTask(plan, call(fn, key, `${key} value`), args, { key, ...options });
    const load = await add('skips', 'load', [], { keepResult: true });
    // skip's reason is its second param: 'load value'
    const transform = await add('value', 'transform', [load]);
    const publish = await add('value', 'publish', [transform], { keepResult: true });
    const other = await add('value', 'other');
    const summary = await proc.zkPlan.addTask(plan, call('report', 'summary'), [publish, other], {
      key: 'summary',
      trigger: 'allDone',
      keepResult: true,
    });
    const skippedEvents: string[] = [];
    proc.zkPlan.on('task:completed', (event) => {
      if (event.skipped !== undefined) skippedEvents.push(`${event.key}: ${event.skipped}`);
    });
    await proc.zkPlan.markAsReady(plan);
    expect(await run(proc, plan)).toBeUndefined();

    expect(calls.get('load')).toHaveLength(1);
    expect(calls.has('transform')).toBe(false);
    expect(calls.has('publish')).toBe(false);
    expect(calls.get('summary')).toEqual([
      [
        { status: 'skipped', reason: 'load value', task: load },
        { status: 'succeeded', value: 'other value' },
      ],
    ]);
    expect(await proc.zkPlan.getResult(summary)).toBe('skipped,succeeded');
    await expect(proc.zkPlan.getResult(load)).rejects.toBeInstanceOf(TaskSkippedError);
    await expect(proc.zkPlan.getResult(publish)).rejects.toMatchObject({
      code: 'TASK_SKIPPED',
      reason: 'load value',
    });

    const status = await proc.zkPlan.plans.status(plan);
    expect(status.state).toBe('completed');
    expect(status.counts).toMatchObject({ total: 5, done: 5, remaining: 0 });
    const view = await proc.zkPlan.plans.describe(plan);
    const byKey = new Map(view.tasks.map((task) => [task.key, task]));
    expect(byKey.get('load')).toMatchObject({ state: 'skipped', skipped: 'load value' });
    expect(byKey.get('transform')).toMatchObject({
      state: 'skipped',
      skipped: `its input ${load} was skipped: load value`,
    });
    expect(byKey.get('publish')?.state).toBe('skipped');
    // why / explain.task says it is done, and why it was skipped.
    expect(await proc.zkPlan.explain.task(transform)).toMatchObject({
      code: 'DONE',
      message: expect.stringContaining(
        `skipped without a result: its input ${load} was skipped`,
      ) as string,
    });
    expect(byKey.get('summary')?.state).toBe('done');
    expect(skippedEvents.sort()).toEqual([
      'load: load value',
      `publish: its input ${load} was skipped: load value`,
      `transform: its input ${load} was skipped: load value`,
    ]);
  });

  it('a mapping task that returns skip is skipped: nothing is mapped', async () => {
    const { proc, calls, plan } = await start();
    const list = await proc.zkPlan.addTask(plan, call('skips', 'list', 'nothing to list'), [], {
      key: 'list',
      map: { fn: 'value' },
    });
    const after = await proc.zkPlan.addTask(plan, call('value', 'after', 'x'), [list]);
    await proc.zkPlan.markAsReady(plan);
    expect(await run(proc, plan)).toBeUndefined();
    expect(calls.has('after')).toBe(false);
    const view = await proc.zkPlan.plans.describe(plan);
    expect(view.tasks.map((task) => task.state)).toEqual(['skipped', 'skipped']);
    expect(view.tasks.find((task) => task.task === after)?.skipped).toContain('nothing to list');
  });

  it('a function may not return a value carrying the outcome mark: its try fails', async () => {
    const { proc, calls, plan } = await start({ maxAttempts: 1 });
    const forger = await proc.zkPlan.addTask(plan, call('forges', 'forger'), [], { key: 'forger' });
    await proc.zkPlan.addTask(plan, call('value', 'after', 'x'), [forger]);
    await proc.zkPlan.markAsReady(plan);
    const ended = await run(proc, plan);
    expect(ended).toBeInstanceOf(PlanFailedError);
    expect((ended as PlanFailedError).failedTasks[0]?.failure).toHaveProperty(
      'message',
      expect.stringContaining('zk-plan:outcome'),
    );
    expect(String((ended as Error).message)).toContain('zk-plan:outcome');
    expect(calls.has('after')).toBe(false);
  });

  it('refuses a reason that is not a text', () => {
    expect(() => skip('')).toThrow(InvalidArgumentError);
    expect(() => skip(undefined as unknown as string)).toThrow(InvalidArgumentError);
  });
});

describe('trigger rules', () => {
  it('allDone runs a clean-up after a failure for good, also through a task that failure blocks; the plan still ends failed', async () => {
    const { proc, calls, plan } = await start();
    const extract = await proc.zkPlan.addTask(plan, call('breaks', 'extract'), [], {
      key: 'extract',
    });
    const transform = await proc.zkPlan.addTask(plan, call('value', 'transform', 't'), [extract], {
      key: 'transform',
    });
    const side = await proc.zkPlan.addTask(plan, call('value', 'side', 's'), [], { key: 'side' });
    const cleanup = await proc.zkPlan.addTask(
      plan,
      call('report', 'cleanup'),
      [extract, transform, side],
      { key: 'cleanup', trigger: 'allDone', keepResult: true },
    );
    await proc.zkPlan.markAsReady(plan);
    const ended = await run(proc, plan);

    expect(ended).toBeInstanceOf(PlanFailedError);
    expect(calls.get('cleanup')).toEqual([
      [
        {
          status: 'failed',
          error: {
            task: extract,
            key: 'extract',
            code: 'DISK_FULL',
            type: 'PermanentError',
            message: expect.stringContaining('extract cannot work') as string,
          },
        },
        {
          status: 'failed',
          error: expect.objectContaining({ task: extract, blocked: transform }) as object,
        },
        { status: 'succeeded', value: 's' },
      ],
    ]);
    expect(await proc.zkPlan.getResult(cleanup)).toBe('failed,failed,succeeded');
    expect(calls.has('transform')).toBe(false);
    const status = await proc.zkPlan.plans.status(plan);
    expect(status.state).toBe('failed');
    expect(status.failed.map(({ task }) => task)).toEqual([extract]);
    expect(status.blocked.map(({ task }) => task)).toEqual([transform]);
    expect(status.counts).toMatchObject({ done: 2, failed: 1, blocked: 1 });
    // The views still draw the clean-up's inputs, though the links that carried the failures are gone.
    const view = await proc.zkPlan.plans.describe(plan);
    expect(view.tasks.find((task) => task.task === cleanup)?.inputs).toEqual([
      extract,
      transform,
      side,
    ]);
    expect(side).toBeDefined();
  });

  it('a oneFailed branch runs only where an input failed; anySucceeded runs on one success and is skipped without one', async () => {
    const { proc, calls, plan } = await start({ maxAttempts: 2 });
    const good = await proc.zkPlan.addTask(plan, call('value', 'good', 'g'), [], { key: 'good' });
    const bad = await proc.zkPlan.addTask(plan, call('flaky', 'bad'), [], { key: 'bad' });
    await proc.zkPlan.addTask(plan, call('report', 'on-bad'), [good, bad], {
      key: 'on-bad',
      trigger: 'oneFailed',
    });
    const onGood = await proc.zkPlan.addTask(plan, call('report', 'on-good'), [good], {
      key: 'on-good',
      trigger: 'oneFailed',
    });
    await proc.zkPlan.addTask(plan, call('report', 'either'), [good, bad], {
      key: 'either',
      trigger: 'anySucceeded',
    });
    const neither = await proc.zkPlan.addTask(plan, call('report', 'neither'), [bad], {
      key: 'neither',
      trigger: 'anySucceeded',
    });
    const afterNeither = await proc.zkPlan.addTask(
      plan,
      call('value', 'after-neither', 'x'),
      [neither],
      { key: 'after-neither' },
    );
    await proc.zkPlan.markAsReady(plan);
    expect(await run(proc, plan)).toBeInstanceOf(PlanFailedError);

    expect(calls.get('bad')).toHaveLength(2); // its retries first
    expect(calls.get('on-bad')?.[0]).toMatchObject([
      { status: 'succeeded', value: 'g' },
      { status: 'failed', error: { task: bad, code: 'TASK_FAILED' } },
    ]);
    expect(calls.has('on-good')).toBe(false);
    expect(calls.get('either')).toHaveLength(1);
    expect(calls.has('neither')).toBe(false);
    expect(calls.has('after-neither')).toBe(false);
    const view = await proc.zkPlan.plans.describe(plan);
    const state = (task: string) => view.tasks.find((entry) => entry.task === task);
    expect(state(onGood)).toMatchObject({
      state: 'skipped',
      skipped: 'no input failed (trigger rule oneFailed)',
    });
    expect(state(neither)).toMatchObject({
      state: 'skipped',
      skipped: 'no input succeeded (trigger rule anySucceeded)',
    });
    expect(state(afterNeither)).toMatchObject({
      state: 'skipped',
      skipped: `its input ${neither} was skipped: no input succeeded`,
    });
    expect((await proc.zkPlan.plans.status(plan)).state).toBe('failed');
  });

  it('retryFailed after a clean-up took the failure: the failed task and the one it blocked run, the clean-up does not run again, and the plan completes', async () => {
    const { proc, calls, plan } = await start({ maxAttempts: 1 });
    let failing = true;
    const registry = functions(calls).register('sometimes', (ctx) => {
      if (failing) throw new Error('not yet possible');
      return ctx.params[1];
    });
    const proc2 = memoryProcess(new MemoryZooKeeper(), 'q', registry);
    open.push(proc2);
    const plan2 = await proc2.zkPlan.createPlan(PARENT, { maxAttempts: 1 });
    const first = await proc2.zkPlan.addTask(plan2, call('sometimes', 'first', 1), [], {
      key: 'first',
    });
    const second = await proc2.zkPlan.addTask(plan2, call('value', 'second', 2), [first], {
      key: 'second',
      keepResult: true,
    });
    await proc2.zkPlan.addTask(plan2, call('report', 'cleanup'), [second], {
      key: 'cleanup',
      trigger: 'allDone',
    });
    await proc2.zkPlan.markAsReady(plan2);
    expect(await run(proc2, plan2)).toBeInstanceOf(PlanFailedError);
    expect(calls.get('cleanup')).toHaveLength(1);
    failing = false;
    expect(await proc2.zkPlan.control.retryFailed(plan2)).toEqual([first]);
    expect(await run(proc2, plan2)).toBeUndefined();
    expect(calls.get('second')).toHaveLength(1);
    expect(await proc2.zkPlan.getResult(second)).toBe(2);
    expect(calls.get('cleanup')).toHaveLength(1);
    expect((await proc2.zkPlan.plans.status(plan2)).state).toBe('completed');
    expect(plan).toBeDefined();
    expect(proc).toBeDefined();
  });

  it('a task with a rule whose continuation fails for good is blocked by it, not completed with the failure; its clean-up gets it', async () => {
    const { proc, calls, plan } = await start();
    const registry = functions(calls).register('hands-over', (ctx) =>
      ctx.continueWith(call('breaks', 'continuation')),
    );
    const proc2 = memoryProcess(new MemoryZooKeeper(), 'q', registry);
    open.push(proc2);
    const plan2 = await proc2.zkPlan.createPlan(PARENT);
    const source = await proc2.zkPlan.addTask(plan2, call('value', 'source', 1), [], {
      key: 'source',
    });
    const spawner = await proc2.zkPlan.addTask(plan2, call('hands-over', 'spawner'), [source], {
      key: 'spawner',
      trigger: 'allDone',
    });
    const cleanup = await proc2.zkPlan.addTask(plan2, call('report', 'cleanup'), [spawner], {
      key: 'cleanup',
      trigger: 'allDone',
      keepResult: true,
    });
    await proc2.zkPlan.markAsReady(plan2);
    expect(await run(proc2, plan2)).toBeInstanceOf(PlanFailedError);
    expect(calls.get('cleanup')?.[0]).toMatchObject([
      { status: 'failed', error: { code: 'DISK_FULL', blocked: spawner } },
    ]);
    expect(await proc2.zkPlan.getResult(cleanup)).toBe('failed');
    const status = await proc2.zkPlan.plans.status(plan2);
    expect(status.blocked.map(({ task }) => task)).toEqual([spawner]);
    expect(proc).toBeDefined();
    expect(plan).toBeDefined();
  });

  it('a task added after its input failed for good, with a rule that takes failures, gets the failure at once', async () => {
    const { proc, calls, plan } = await start();
    const broken = await proc.zkPlan.addTask(plan, call('breaks', 'broken'), [], { key: 'broken' });
    await proc.zkPlan.markAsReady(plan);
    expect(await run(proc, plan)).toBeInstanceOf(PlanFailedError);
    const late = await proc.zkPlan.addTask(plan, call('report', 'late'), [broken], {
      key: 'late',
      trigger: 'allDone',
      keepResult: true,
    });
    expect(await run(proc, plan)).toBeInstanceOf(PlanFailedError);
    expect(await proc.zkPlan.getResult(late)).toBe('failed');
    const view = await proc.zkPlan.plans.describe(plan);
    expect(view.tasks.find((task) => task.task === late)?.inputs).toEqual([broken]);
    expect(calls.get('late')).toHaveLength(1);
  });

  it('in a failFast plan nothing new starts after a failure, clean-ups included', async () => {
    const { proc, calls, plan } = await start({ failurePolicy: 'failFast' });
    const broken = await proc.zkPlan.addTask(plan, call('breaks', 'broken'), [], { key: 'broken' });
    await proc.zkPlan.addTask(plan, call('report', 'cleanup'), [broken], {
      key: 'cleanup',
      trigger: 'allDone',
    });
    await proc.zkPlan.markAsReady(plan);
    expect(await run(proc, plan)).toBeInstanceOf(PlanFailedError);
    expect(calls.has('cleanup')).toBe(false);
  });

  it('a spec names a rule beside fn; a bad rule is refused before anything is written', async () => {
    const { proc, calls } = await start();
    const submitted = await proc.zkPlan.submitPlan(PARENT, {
      tasks: {
        extract: { fn: 'breaks', params: ['extract'] },
        notify: { fn: 'report', params: ['notify'], inputs: ['extract'], trigger: 'oneFailed' },
      },
    });
    expect(await run(proc, submitted.plan)).toBeInstanceOf(PlanFailedError);
    expect(calls.get('notify')?.[0]).toMatchObject([{ status: 'failed' }]);

    const plansBefore = await proc.zk.getChildren(PARENT);
    for (const tasks of [
      { a: { fn: 'value', params: ['a'], trigger: 'always' } },
      { a: { fn: 'value', params: ['a'], options: { trigger: 'allDone' } } },
    ])
      await expect(proc.zkPlan.submitPlan(PARENT, { tasks } as never)).rejects.toBeInstanceOf(
        PlanSpecError,
      );
    expect((await proc.zk.getChildren(PARENT)).children).toEqual(plansBefore.children);
    const plan = await proc.zkPlan.createPlan(PARENT);
    await expect(
      proc.zkPlan.addTask(plan, call('value', 'a'), [], { trigger: 'sometimes' as never }),
    ).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
      message: expect.stringContaining('trigger') as string,
    });
  });

  it('a plan exported before it ran keeps its rules when imported', async () => {
    const { proc, calls, plan } = await start();
    const load = await proc.zkPlan.addTask(plan, call('skips', 'load', 'nothing new'), [], {
      key: 'load',
    });
    const step = await proc.zkPlan.addTask(plan, call('value', 'step', 's'), [load], {
      key: 'step',
    });
    await proc.zkPlan.addTask(plan, call('report', 'summary'), [load, step], {
      key: 'summary',
      trigger: 'allDone',
      keepResult: true,
    });
    await proc.zkPlan.markAsReady(plan);
    const snapshot = await proc.zkPlan.snapshots.export(plan);
    await proc.zkPlan.plans.delete(plan);
    const imported = await proc.zkPlan.snapshots.import(PARENT, snapshot);
    expect(await run(proc, imported.plan)).toBeUndefined();
    expect(calls.get('summary')).toEqual([
      [
        { status: 'skipped', reason: 'nothing new', task: imported.tasks['load'] },
        { status: 'skipped', reason: 'nothing new', task: imported.tasks['load'] },
      ],
    ]);
  });
});

describe('a skip from another copy of zk-plan', () => {
  it('is a skip: a functions module may load a copy of its own', async () => {
    const calls: Calls = new Map();
    const foreignSkip = { reason: 'from another copy' };
    Object.defineProperty(foreignSkip, Symbol.for('zk-plan.skip'), { value: true });
    const registry = functions(calls).register('foreign', () => foreignSkip);
    const proc = memoryProcess(new MemoryZooKeeper(), 'p', registry);
    open.push(proc);
    const plan = await proc.zkPlan.createPlan(PARENT);
    const task = await proc.zkPlan.addTask(plan, call('foreign'), [], { keepResult: true });
    await proc.zkPlan.markAsReady(plan);
    expect(await run(proc, plan)).toBeUndefined();
    await expect(proc.zkPlan.getResult(task)).rejects.toMatchObject({
      code: 'TASK_SKIPPED',
      reason: 'from another copy',
    });
  });
});
