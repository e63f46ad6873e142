/**
 * Findings of the outside review of the failure's hand-on (issue 23), each kept as a test:
 *
 * 1. A walk again after a crash must not write the failure into a dependent that took it already
 *    and is half deleted since (its deleter died): the walk hands on as a refeed.
 * 2. A continuation linked to an input that failed for good before the hand-over could never run,
 *    and no walk would reach the tasks after its spawner: the hand-over is refused (INPUT_FAILED,
 *    for good), and the spawner's own failure reaches its clean-up.
 * 3. One malformed link of the failed task does not keep the failure from the others, and a link
 *    into another plan is not followed.
 * 4. A skip stored by a worker that died before handing it on is recorded as a skip by the one
 *    that does.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  FunctionRegistry,
  PermanentError,
  PlanFailedError,
  call,
  skip,
  type InputOutcome,
} from '../../src/index.js';
import { MemoryZooKeeper } from '../../src/testing/index.js';
import { TaskStore } from '../../src/store/task-store.js';
import { handOnFailure } from '../../src/trigger/failure-hand-on.js';
import { encodeValue } from '../../src/serialization/codec.js';
import { FAST_BACKOFF, memoryProcess, pause, type MemoryProcess } from '../support/memory-plan.js';
import { CrashScheduler, Victim } from '../support/crash-scheduler.js';

const PARENT = '/plans';
const FAILURE = { task: '', code: 'BROKEN', type: 'PermanentError', message: 'broken' };
const open: MemoryProcess[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map(({ zkPlan }) => zkPlan.close().catch(() => undefined)));
});

function process(server: MemoryZooKeeper, name: string, functions = new FunctionRegistry()) {
  const proc = memoryProcess(server, name, functions);
  open.push(proc);
  return proc;
}

/** A task that fails, and a clean-up under allDone after it (not ready: nothing runs them). */
async function failedWithCleanUp(
  proc: MemoryProcess,
): Promise<{ failed: string; cleanup: string }> {
  const plan = await proc.zkPlan.createPlan(PARENT);
  const failed = await proc.zkPlan.addTask(plan, call('breaks'));
  const cleanup = await proc.zkPlan.addTask(plan, call('clean-up'), [failed], {
    trigger: 'allDone',
  });
  return { failed, cleanup };
}

async function claimOf(proc: MemoryProcess, task: string) {
  const store = new TaskStore(proc.zk);
  const claim = await store.claim(task, 'reviewer', new AbortController().signal);
  if (claim === undefined) throw new Error(`could not claim ${task}`);
  return { store, claim };
}

describe('the failure hand-on, after its review', () => {
  it('a walk again writes nothing into a dependent that took the failure and is half deleted', async () => {
    const server = new MemoryZooKeeper();
    const proc = process(server, 'p');
    const { failed, cleanup } = await failedWithCleanUp(proc);
    // As an earlier walk left it, its worker dead before the unlink: the input handed on (its dep
    // gone), then the dependent ran and its deleter died with only the node itself left.
    for (const child of (await proc.zk.getChildren(cleanup)).children)
      await proc.zk.delete(`${cleanup}/${child}`, -1);
    const { store, claim } = await claimOf(proc, failed);
    await handOnFailure(store, claim, { ...FAILURE, task: failed });
    expect((await proc.zk.getChildren(cleanup)).children).toEqual([]);
    expect(
      (await proc.zk.getChildren(failed)).children.filter((name) => name.startsWith('prov-')),
    ).toEqual([]);
  });

  it('one malformed link of the failed task does not keep the failure from the others', async () => {
    const server = new MemoryZooKeeper();
    const proc = process(server, 'p');
    const { failed, cleanup } = await failedWithCleanUp(proc);
    await proc.zk.create(
      `${failed}/prov-`,
      encodeValue('not a link', 'forged link'),
      'persistent-sequential',
    );
    const { store, claim } = await claimOf(proc, failed);
    await handOnFailure(store, claim, { ...FAILURE, task: failed });
    expect((await proc.zk.getChildren(cleanup)).children.sort()).toEqual([
      'arg-0000000000',
      'ready',
    ]);
  });

  it("a link that points into another plan is not followed: the failure is written in the failed task's plan only", async () => {
    const server = new MemoryZooKeeper();
    const proc = process(server, 'p');
    const { failed } = await failedWithCleanUp(proc);
    const { cleanup: elsewhere } = await failedWithCleanUp(proc);
    const [dep] = (await proc.zk.getChildren(elsewhere)).children.filter((name) =>
      name.startsWith('dep-'),
    );
    await proc.zk.create(
      `${failed}/prov-`,
      encodeValue(`${elsewhere}/${dep as string}`, 'forged link'),
      'persistent-sequential',
    );
    const { store, claim } = await claimOf(proc, failed);
    await handOnFailure(store, claim, { ...FAILURE, task: failed });
    expect((await proc.zk.getChildren(elsewhere)).children.sort()).toEqual([dep, 'ready']);
  });

  it("a hand-over to a task whose input failed for good already is refused for good, and the spawner's failure reaches its clean-up", async () => {
    const server = new MemoryZooKeeper();
    const cleanups: InputOutcome[][] = [];
    let child = '';
    const functions = new FunctionRegistry()
      .register('breaks', () => {
        throw new PermanentError('the child cannot work');
      })
      .register('spawner', async (ctx) => {
        [child] = (await ctx.spawn([{ task: call('breaks') }])) as [string];
        // The child fails for good on another loop before the hand-over links to it.
        while (!server.exists(`${child}/failed`)) await pause(5);
        return ctx.continueWith(call('reduce'), [child]);
      })
      .register('reduce', () => 'reduced')
      .register('clean-up', (_ctx, ...outcomes: InputOutcome[]) => {
        cleanups.push(outcomes);
        return 'cleaned';
      });
    const proc = process(server, 'p', functions);
    const plan = await proc.zkPlan.createPlan(PARENT);
    const spawner = await proc.zkPlan.addTask(plan, call('spawner'));
    await proc.zkPlan.addTask(plan, call('clean-up'), [spawner], { trigger: 'allDone' });
    await proc.zkPlan.markAsReady(plan);
    const pool = proc.zkPlan.startWorkers(PARENT, { count: 2, backoff: FAST_BACKOFF });
    const ended = await proc.zkPlan
      .waitForCompletion(plan, { timeoutMs: 10_000 })
      .catch((error: unknown) => error);
    await pool.stop();
    expect(ended).toBeInstanceOf(PlanFailedError);
    expect(cleanups).toEqual([
      [
        {
          status: 'failed',
          error: expect.objectContaining({ task: spawner, code: 'INPUT_FAILED' }) as object,
        },
      ],
    ]);
    const status = await proc.zkPlan.plans.status(plan);
    expect(status.failed.map(({ task }) => task).sort()).toEqual([spawner, child].sort());
    expect(status.failed.find(({ task }) => task === spawner)?.failure?.retryable).toBe(false);
  });

  it('a skip stored by a worker that died before handing it on is recorded as a skip', async () => {
    const scheduler = new CrashScheduler();
    const server = new MemoryZooKeeper({ scheduler });
    const functions = new FunctionRegistry().register('skips', () => skip('nothing to do'));
    const builder = process(server, 'builder', functions);
    const plan = await builder.zkPlan.createPlan(PARENT);
    const task = await builder.zkPlan.addTask(plan, call('skips'), [], { keepResult: true });
    await builder.zkPlan.markAsReady(plan);
    const doomed = memoryProcess(server, 'doomed', functions); // crashed: never closed
    const victim = new Victim(
      server,
      doomed.zk,
      0,
      (op, path) =>
        op === 'create' && path.endsWith(`/history/${task.slice(task.lastIndexOf('/') + 1)}`),
    );
    scheduler.victim = victim;
    void doomed.zkPlan.startWorkers(PARENT, { count: 1, backoff: FAST_BACKOFF });
    await victim.crashed;
    scheduler.victim = undefined;
    const survivor = process(server, 'survivor', functions);
    const skipped: (string | undefined)[] = [];
    survivor.zkPlan.on('task:completed', (event) => skipped.push(event.skipped));
    const pool = survivor.zkPlan.startWorkers(PARENT, { count: 1, backoff: FAST_BACKOFF });
    await survivor.zkPlan.waitForCompletion(plan, { timeoutMs: 10_000 });
    await pool.stop();
    const view = await survivor.zkPlan.plans.describe(plan);
    expect(view.tasks.map(({ state, skipped: reason }) => [state, reason])).toEqual([
      ['skipped', 'nothing to do'],
    ]);
    expect(skipped).toEqual(['nothing to do']);
  });

  it("an imported plan hands its failed tasks' failures to the tasks whose rule takes them", async () => {
    const server = new MemoryZooKeeper();
    const cleanups: string[] = [];
    let release = false;
    const functions = new FunctionRegistry()
      .register('breaks', () => {
        throw new PermanentError('broken');
      })
      .register('slow', async () => {
        while (!release) await pause(5);
        return 'slow';
      })
      .register('clean-up', (_ctx, ...outcomes: InputOutcome[]) => {
        cleanups.push(outcomes.map((outcome) => outcome.status).join(','));
        return 'cleaned';
      });
    const proc = process(server, 'p', functions);
    const { plan, tasks } = await proc.zkPlan.submitPlan(PARENT, {
      tasks: {
        a: { fn: 'breaks' },
        c: { fn: 'slow' },
        d: { fn: 'clean-up', inputs: ['a', 'c'], trigger: 'allDone' },
      },
    });
    const pool = proc.zkPlan.startWorkers(PARENT, { count: 2, backoff: FAST_BACKOFF });
    while (!server.exists(`${tasks['a'] as string}/failed`)) await pause(5);
    const snapshot = await proc.zkPlan.snapshots.export(plan);
    release = true;
    await proc.zkPlan.waitForCompletion(plan, { timeoutMs: 10_000 }).catch(() => undefined);
    const imported = await proc.zkPlan.snapshots.import('/imported', snapshot);
    const importPool = proc.zkPlan.startWorkers('/imported', { count: 2, backoff: FAST_BACKOFF });
    const ended = await proc.zkPlan
      .waitForCompletion(imported.plan, { timeoutMs: 10_000 })
      .catch((error: unknown) => error);
    await Promise.all([pool.stop(), importPool.stop()]);
    expect(ended).toBeInstanceOf(PlanFailedError);
    // Once in the plan, once in its import: each time with a's failure.
    expect(cleanups).toEqual(['failed,succeeded', 'failed,succeeded']);
  });
});
