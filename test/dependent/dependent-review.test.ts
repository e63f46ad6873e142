/**
 * What an outside review of `ctx.notYet` and dependent tasks found, each reproduced over the
 * in-memory ZooKeeper and fixed: a waiting task that stopped the full scan (so tasks after it, and
 * other waiting tasks a closed process left out of the index, were never found), a claim loop in a
 * plan without an index, a dependent that took a plan not readied yet for completed, a mapping
 * task's "not yet" charged as a failure, inputs refused only at check time (or never), and a forged
 * `waiting` record that stopped a task for good.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { FunctionRegistry, call, waitForPlan } from '../../src/index.js';
import { InvalidArgumentError } from '../../src/errors/usage-errors.js';
import { encodeValue } from '../../src/serialization/codec.js';
import { MemoryZooKeeper } from '../../src/testing/index.js';
import { RUNNABLE_INDEX, WAITING, childPath, nameOf } from '../../src/zk/layout.js';
import { FAST_BACKOFF, memoryProcess, pause, type MemoryProcess } from '../support/memory-plan.js';

const open: MemoryProcess[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map(({ zkPlan }) => zkPlan.close()));
});

function processOf(
  server: MemoryZooKeeper,
  name: string,
  functions: FunctionRegistry,
  fullScanIntervalMs?: number,
): MemoryProcess {
  const proc = memoryProcess(
    server,
    name,
    functions,
    fullScanIntervalMs === undefined ? {} : { fullScanIntervalMs },
  );
  open.push(proc);
  return proc;
}

async function until(condition: () => Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 600; i++) {
    if (await condition()) return;
    await pause(5);
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('notYet and dependent tasks: what the review found', () => {
  it('a waiting task does not stop the full scan: a task after it whose index entry is gone is found', async () => {
    const server = new MemoryZooKeeper();
    const functions = new FunctionRegistry()
      .register('sensor', (ctx) => ctx.notYet('never', { afterMs: 60_000 }))
      .register('lost', () => 'found');
    const builder = processOf(server, 'builder', functions);
    const first = await builder.zkPlan.createPlan('/plans');
    await builder.zkPlan.addTask(first, call('sensor'));
    await builder.zkPlan.markAsReady(first);
    const second = await builder.zkPlan.createPlan('/plans');
    const lost = await builder.zkPlan.addTask(second, call('lost'));
    await builder.zkPlan.markAsReady(second);
    await builder.zk.delete(childPath(childPath(second, RUNNABLE_INDEX), nameOf(lost)));
    const worker = processOf(server, 'worker', functions, 100);
    let claims = 0;
    worker.zkPlan.on('task:claimed', () => (claims += 1));
    worker.zkPlan.startWorkers('/plans', { count: 1, backoff: FAST_BACKOFF });
    await worker.zkPlan.waitForCompletion(second, { timeoutMs: 3_000 });
    expect(claims).toBeLessThan(5); // the sensor's one check, and the lost task
  });

  it('every waiting task a closed process left out of the index is checked again by the others', async () => {
    const server = new MemoryZooKeeper();
    const checks = new Map<string, number>();
    const functions = new FunctionRegistry().register('sensor', (ctx) => {
      const name = String(ctx.params[0]);
      checks.set(name, (checks.get(name) ?? 0) + 1);
      return ctx.notYet(`${name} not there`, { afterMs: 300 });
    });
    const first = processOf(server, 'first', functions);
    const plan = await first.zkPlan.createPlan('/plans');
    await first.zkPlan.addTask(plan, call('sensor', 'w1'));
    await first.zkPlan.addTask(plan, call('sensor', 'w2'));
    await first.zkPlan.markAsReady(plan);
    const pool = first.zkPlan.startWorkers('/plans', { count: 2, backoff: FAST_BACKOFF });
    await until(
      async () => (checks.get('w1') ?? 0) > 0 && (checks.get('w2') ?? 0) > 0,
      'both checks',
    );
    await pool.stop();
    await first.zkPlan.close();
    const before = new Map(checks);
    const survivor = processOf(server, 'survivor', functions, 100);
    survivor.zkPlan.startWorkers('/plans', { count: 1, backoff: FAST_BACKOFF });
    await until(
      async () =>
        (checks.get('w1') ?? 0) > (before.get('w1') ?? 0) &&
        (checks.get('w2') ?? 0) > (before.get('w2') ?? 0),
      'both sensors checked again by the survivor',
    );
  });

  it('a plan without a runnable index: its waiting task is not claimed again and again before its time', async () => {
    const server = new MemoryZooKeeper();
    const functions = new FunctionRegistry().register('sensor', (ctx) =>
      ctx.notYet('later', { afterMs: 60_000 }),
    );
    const builder = processOf(server, 'builder', functions);
    const plan = await builder.zkPlan.createPlan('/plans');
    const task = await builder.zkPlan.addTask(plan, call('sensor'));
    await builder.zkPlan.markAsReady(plan);
    await builder.zk.delete(childPath(childPath(plan, RUNNABLE_INDEX), nameOf(task)));
    await builder.zk.delete(childPath(plan, RUNNABLE_INDEX));
    const worker = processOf(server, 'worker', functions);
    let claims = 0;
    worker.zkPlan.on('task:claimed', () => (claims += 1));
    worker.zkPlan.startWorkers('/plans', { count: 1, backoff: FAST_BACKOFF });
    await pause(500);
    expect(claims).toBeGreaterThanOrEqual(1);
    expect(claims).toBeLessThan(5);
  });

  it('a dependent on a plan not readied yet waits, and a mapping task may say "not yet" uncharged', async () => {
    const server = new MemoryZooKeeper();
    let listed = 0;
    const functions = new FunctionRegistry()
      .register('list', (ctx) =>
        listed++ === 0 ? ctx.notYet('the list is not ready', { afterMs: 20 }) : [1, 2],
      )
      .register('double', (ctx) => Number(ctx.params[0]) * 2)
      .register('ok', () => 'ok');
    const proc = processOf(server, 'worker', functions);
    const { zkPlan } = proc;
    const building = await zkPlan.createPlan('/upstream');
    const plan = await zkPlan.createPlan('/plans', { maxAttempts: 1 });
    const wait = await zkPlan.addTask(plan, waitForPlan({ plan: building, checkEveryMs: 20 }));
    const mapped = await zkPlan.addTask(plan, call('list'), [], {
      map: { fn: 'double' },
      keepResult: true,
    });
    await zkPlan.markAsReady(plan);
    zkPlan.startWorkers('/plans', { count: 1, backoff: FAST_BACKOFF });
    await until(
      async () => (await zkPlan.explain.task(wait)).code === 'WAITING_FOR_CONDITION',
      'the dependent to wait',
    );
    expect((await zkPlan.explain.task(wait)).message).toContain(`plan ${building} is building`);
    await zkPlan.addTask(building, call('ok'));
    await zkPlan.markAsReady(building);
    zkPlan.startWorkers('/upstream', { count: 1, backoff: FAST_BACKOFF });
    await zkPlan.waitForCompletion(plan, { timeoutMs: 5_000 });
    expect(await zkPlan.getResult(mapped)).toEqual([2, 4]);
  });

  it('refuses when the task is added: a schedule name that is no name, a moment without its offset, extra fields, its own plan', async () => {
    const server = new MemoryZooKeeper();
    const proc = processOf(server, 'builder', new FunctionRegistry());
    const plan = await proc.zkPlan.createPlan('/plans');
    for (const target of [
      { schedule: '..', at: 0 },
      { schedule: 'a/b', at: 0 },
      { schedule: 'nightly', at: '2026-11-26T00:00:00' },
      { schedule: 'nightly', at: 10n },
      { plan: '/plans/x', offsetMs: 5 },
    ])
      expect(() => waitForPlan(target as Parameters<typeof waitForPlan>[0])).toThrow(
        InvalidArgumentError,
      );
    await expect(proc.zkPlan.addTask(plan, waitForPlan({ plan }))).rejects.toThrow(
      /waits for its own plan/,
    );
  });

  it('a forged waiting record (a time far off, a date that is none) does not stop the task', async () => {
    const server = new MemoryZooKeeper();
    let runs = 0;
    const functions = new FunctionRegistry().register('once', () => {
      runs += 1;
      return 'ran';
    });
    const proc = processOf(server, 'worker', functions);
    const { zkPlan } = proc;
    const plan = await zkPlan.createPlan('/plans');
    const far = await zkPlan.addTask(plan, call('once'));
    const invalid = await zkPlan.addTask(plan, call('once'));
    const farOff = { reason: 'x', since: new Date(), checks: 1, notBefore: new Date(8.64e15) };
    await proc.zk.create(childPath(far, WAITING), encodeValue(farOff, 'forged'));
    // superjson's form of a Date that is none ("since" is no time), as anyone may write it.
    const noDate = {
      json: { reason: 'x', since: 'no time', checks: 1, notBefore: new Date().toISOString() },
      meta: { values: { since: ['Date'], notBefore: ['Date'] } },
    };
    await proc.zk.create(childPath(invalid, WAITING), Buffer.from(JSON.stringify(noDate)));
    await zkPlan.markAsReady(plan);
    zkPlan.startWorkers('/plans', { count: 1, backoff: FAST_BACKOFF });
    await zkPlan.waitForCompletion(plan, { timeoutMs: 5_000 });
    expect(runs).toBe(2);
  });
});
