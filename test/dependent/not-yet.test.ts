/**
 * `ctx.notYet`: a task whose function says "not yet" is given back without charging an attempt,
 * records why (`waiting`), holds no worker while it waits (another task runs on the one loop
 * meanwhile), and runs again after `afterMs` until its function returns a value.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { FunctionRegistry, call } from '../../src/index.js';
import { InvalidArgumentError } from '../../src/errors/usage-errors.js';
import { MemoryZooKeeper } from '../../src/testing/index.js';
import { WAITING, childPath } from '../../src/zk/layout.js';
import { FAST_BACKOFF, memoryProcess, pause, type MemoryProcess } from '../support/memory-plan.js';

const open: MemoryProcess[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map(({ zkPlan }) => zkPlan.close()));
});

describe('ctx.notYet', () => {
  it('gives the task back uncharged, records why, frees the worker, and runs it again until it returns', async () => {
    const server = new MemoryZooKeeper();
    let checks = 0;
    let otherRanWhileWaiting = false;
    const order: string[] = [];
    const functions = new FunctionRegistry()
      .register('sensor', (ctx) => {
        checks += 1;
        order.push(`sensor ${checks}`);
        if (checks < 3)
          return ctx.notYet(`the export is not there (check ${checks})`, { afterMs: 30 });
        return 'found';
      })
      .register('other', () => {
        order.push('other');
        otherRanWhileWaiting = checks > 0 && checks < 3;
        return 'other done';
      })
      .register('report', (_ctx, found: string) => `report on ${found}`);
    const proc = memoryProcess(server, 'worker', functions);
    open.push(proc);
    const { zkPlan } = proc;
    const waits: { reason: string; nextCheckAt: Date }[] = [];
    zkPlan.on('task:waiting', ({ reason, nextCheckAt }) => waits.push({ reason, nextCheckAt }));
    const plan = await zkPlan.createPlan('/plans', { maxAttempts: 1 });
    const sensor = await zkPlan.addTask(plan, call('sensor'), [], { key: 'sensor' });
    const report = await zkPlan.addTask(plan, call('report'), [sensor], { keepResult: true });
    await zkPlan.markAsReady(plan);
    // One loop: the sensor's first check runs, then the loop is free for the other task.
    zkPlan.startWorkers('/plans', { count: 1, backoff: FAST_BACKOFF });
    for (let i = 0; i < 200 && checks === 0; i++) await pause(2);
    const waiting = await proc.zk.getData(childPath(sensor, WAITING));
    expect(waiting.data).not.toBeNull();
    const other = await zkPlan.addTask(plan, call('other'), [], { keepResult: true });
    await zkPlan.waitForCompletion(plan, { timeoutMs: 10_000 });
    expect(await zkPlan.getResult(report)).toBe('report on found');
    expect(await zkPlan.getResult(other)).toBe('other done');
    expect(checks).toBe(3);
    expect(otherRanWhileWaiting).toBe(true);
    expect(waits.map((wait) => wait.reason)).toEqual([
      'the export is not there (check 1)',
      'the export is not there (check 2)',
    ]);
  });

  it('refuses a bad reason or delay as the try failure, naming the task', async () => {
    const server = new MemoryZooKeeper();
    const functions = new FunctionRegistry().register('bad', (ctx) =>
      ctx.notYet('waiting', { afterMs: 0.5 }),
    );
    const proc = memoryProcess(server, 'worker', functions);
    open.push(proc);
    const failures: unknown[] = [];
    proc.zkPlan.on('task:failed', ({ error }) => failures.push(error));
    const plan = await proc.zkPlan.createPlan('/plans', { maxAttempts: 1 });
    await proc.zkPlan.addTask(plan, call('bad'));
    await proc.zkPlan.markAsReady(plan);
    proc.zkPlan.startWorkers('/plans', { count: 1, backoff: FAST_BACKOFF });
    for (let i = 0; i < 500 && failures.length === 0; i++) await pause(2);
    expect(String((failures[0] as Error).message)).toMatch(/afterMs.*whole number of ms from 10/);
    expect((failures[0] as { cause?: unknown }).cause).toBeInstanceOf(InvalidArgumentError);
  });
});
