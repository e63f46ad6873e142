/**
 * jobs(parent): definitions checked before anything is written, changes, triggers, removal and what
 * list() shows, and job workers disabled and enabled, over the in-memory ZooKeeper.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { JobError, JobNotFoundError } from '../../src/errors/job-errors.js';
import { MalformedNodeError } from '../../src/errors/task-errors.js';
import { InvalidArgumentError } from '../../src/errors/usage-errors.js';
import { FunctionRegistry, type JobContext, type JobDefinition } from '../../src/index.js';
import { poolItems, resolveJob } from '../../src/jobs/job-definition.js';
import { JobStore } from '../../src/jobs/job-store.js';
import { assertJobWorkerId, newJobWorkerId } from '../../src/jobs/job-worker.js';
import { MemoryZooKeeper } from '../../src/testing/index.js';
import { decodeValue } from '../../src/serialization/codec.js';
import { ManualScheduler } from '../../src/testing/index.js';
import { childPath, jobNodes, jobsNodes } from '../../src/zk/layout.js';
import { expectRejects, expectThrows } from '../support/expect-error.js';
import { memoryProcess, type MemoryProcess } from '../support/memory-plan.js';
import {
  FLAG_GRACE_MS,
  World,
  activity,
  holder,
  run,
  sleep,
  workingOn,
  type Activity,
  type Proc,
} from './support/job-harness.js';

const JOBS = '/jobs';
const GOOD: JobDefinition = {
  name: 'mail',
  fn: 'poll',
  workPool: { items: ['a', 'b'] },
  mode: { everyMs: 1_000 },
};

const open: MemoryProcess[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map(({ zkPlan }) => zkPlan.close()));
});

function proc(
  server: MemoryZooKeeper,
  name: string,
  functions = new FunctionRegistry(),
): MemoryProcess {
  const made = memoryProcess(server, name, functions);
  open.push(made);
  return made;
}

describe('job definitions', () => {
  it.each<[string, unknown, string, string]>([
    ['a name with a slash', { ...GOOD, name: 'a/b' }, 'name', 'expected a job name'],
    ['a reserved name', { ...GOOD, name: 'zk-plan-x' }, 'name', 'zk-plan-'],
    ['an unknown field', { ...GOOD, shards: 3 }, 'job', 'unknown field "shards"'],
    [
      'no function',
      { ...GOOD, fn: '' },
      'fn',
      'job "mail": expected a name of a function registered with registerJob',
    ],
    ['zero shards', { ...GOOD, workPool: { shards: 0 } }, 'workPool.shards', 'from 1 to 10000'],
    [
      'fractional shards',
      { ...GOOD, workPool: { shards: 2.5 } },
      'workPool.shards',
      'whole number',
    ],
    [
      'more params than shards',
      { ...GOOD, workPool: { shards: 1, params: [1, 2] } },
      'workPool.params',
      'at most 1',
    ],
    [
      'an item id with a slash',
      { ...GOOD, workPool: { items: ['a/b'] } },
      'workPool.items',
      '"a/b" is not an item id',
    ],
    [
      'an item listed twice',
      { ...GOOD, workPool: { items: ['a', 'a'] } },
      'workPool.items',
      'listed twice',
    ],
    [
      'a pool of both kinds',
      { ...GOOD, workPool: { items: ['a'], shards: 2 } },
      'workPool',
      'takes no other field',
    ],
    ['a fractional everyMs', { ...GOOD, mode: { everyMs: 1.5 } }, 'mode.everyMs', 'whole number'],
    ['a bad cron', { ...GOOD, mode: { cron: 'every day' } }, 'cron', 'not a cron expression'],
    [
      'an unknown time zone',
      { ...GOOD, mode: { cron: '* * * * *', timezone: 'Mars/Olympus' } },
      'timezone',
      'Mars/Olympus',
    ],
    ['an unknown mode', { ...GOOD, mode: 'sometimes' }, 'mode', "expected 'continuous'"],
    ['a bad strategy name', { ...GOOD, strategy: 'by tenant' }, 'strategy', 'registered strategy'],
  ])('refuses %s, naming the field', (_what, input, argument, message) => {
    const error = expectThrows(
      () => resolveJob(input as JobDefinition, new Date(0)),
      InvalidArgumentError,
    );
    expect(error.argument).toBe(argument);
    expect(error.message).toContain(message);
  });

  it('gives shards ids 0…n-1 with their params, and named items as they are', () => {
    expect(poolItems({ shards: 3, params: ['x', undefined, { y: 1 }] })).toEqual([
      { id: '0', params: 'x' },
      { id: '1' },
      { id: '2', params: { y: 1 } },
    ]);
    expect(poolItems({ items: ['b', 'a'] })).toEqual([{ id: 'b' }, { id: 'a' }]);
  });
});

describe('jobs(parent)', () => {
  it('defines, changes and reads jobs; refuses what does not apply, naming the job', async () => {
    const server = new MemoryZooKeeper();
    const jobs = proc(server, 'admin').zkPlan.jobs(JOBS);
    const stored = await jobs.define(GOOD);
    expect(stored).toMatchObject({ name: 'mail', strategy: 'evenly', disabled: false });
    expect((await jobs.setWorkPool('mail', ['c', 'd', 'e'])).workPool).toEqual({
      items: ['c', 'd', 'e'],
    });
    expect((await jobs.disable('mail')).disabled).toBe(true);
    expect((await jobs.enable('mail')).disabled).toBe(false);
    await jobs.define({
      ...GOOD,
      name: 'shards',
      workPool: { shards: 4 },
      mode: 'continuous',
      strategy: 'rendezvous',
    });
    const pool = await expectRejects(() => jobs.setWorkPool('shards', ['x']), JobError);
    expect([pool.code, pool.path]).toEqual(['JOB_POOL_IS_SHARDS', jobNodes(JOBS, 'shards').node]);
    const continuous = await expectRejects(() => jobs.trigger('shards'), JobError);
    expect(continuous.code).toBe('JOB_CONTINUOUS');
    const missing = await expectRejects(() => jobs.disable('nope'), JobNotFoundError);
    expect([missing.code, missing.path]).toEqual(['JOB_NOT_FOUND', jobNodes(JOBS, 'nope').node]);
    await expectRejects(() => jobs.setWorkPool('mail', ['ok', 'not ok']), InvalidArgumentError);
    const list = await jobs.list();
    expect(list.map((job) => [job.name, job.unassigned])).toEqual([
      ['mail', ['c', 'd', 'e']], // no worker yet
      ['shards', ['0', '1', '2', '3']],
    ]);
  });

  it('list() reports a malformed node as skipped and a worker reading it does not stop; define replaces it', async () => {
    const server = new MemoryZooKeeper();
    const admin = proc(server, 'admin');
    const jobs = admin.zkPlan.jobs(JOBS);
    await admin.zk.ensurePath(JOBS);
    await admin.zk.create(jobNodes(JOBS, 'broken').node, Buffer.from('{"json":{"name":"broken"}}'));
    await expectRejects(() => new JobStore(admin.zk, JOBS).read('broken'), MalformedNodeError);
    expect(await jobs.list()).toEqual([]);
    await jobs.define({ ...GOOD, name: 'broken' });
    expect((await jobs.list()).map((job) => job.name)).toEqual(['broken']);
  });

  it('trigger runs an everyMs job now on the worker holding its items; remove waits until no item is held, then deletes the job', async () => {
    const server = new MemoryZooKeeper();
    const runs: { at: number; items: string[]; firedAt: Date | undefined }[] = [];
    const functions = new FunctionRegistry().registerJob('poll', (ctx: JobContext) => {
      runs.push({ at: Date.now(), items: ctx.items.map((item) => item.id), firedAt: ctx.firedAt });
    });
    const worker = proc(server, 'worker', functions);
    const handle = worker.zkPlan.startJobWorker(JOBS, { leaseMs: 600, pollMs: 100 });
    const jobs = proc(server, 'admin').zkPlan.jobs(JOBS);
    await jobs.define({ ...GOOD, mode: { everyMs: 60_000 } });
    await expect.poll(() => handle.held()['mail']?.length ?? 0).toBe(2);
    const before = runs.length;
    await jobs.trigger('mail');
    await expect.poll(() => runs.length).toBe(before + 1);
    expect(runs.at(-1)?.items).toEqual(['a', 'b']);
    expect(runs.at(-1)?.firedAt).toBeInstanceOf(Date);
    const removedAt = Date.now();
    await jobs.remove('mail');
    expect(Date.now() - removedAt).toBeLessThan(600); // given back by the worker, not waited out
    expect(server.exists(jobNodes(JOBS, 'mail').node)).toBe(false);
    await expect.poll(() => handle.held()['mail']).toBeUndefined();
  });

  it('an everyMs job runs on each due time with the share; a cron job at each tick', async () => {
    const server = new MemoryZooKeeper();
    const runs: { job: string; firedAt: number }[] = [];
    const functions = new FunctionRegistry().registerJob('poll', (ctx: JobContext) => {
      runs.push({ job: ctx.job, firedAt: ctx.firedAt?.getTime() ?? 0 });
    });
    const worker = proc(server, 'worker', functions);
    worker.zkPlan.startJobWorker(JOBS, { leaseMs: 600, pollMs: 100 });
    const jobs = proc(server, 'admin').zkPlan.jobs(JOBS);
    await jobs.define({ ...GOOD, name: 'fast', mode: { everyMs: 100 } });
    await jobs.define({ ...GOOD, name: 'ticking', mode: { cron: '* * * * * *' } });
    await expect
      .poll(() => runs.filter((run) => run.job === 'fast').length, { timeout: 5_000 })
      .toBeGreaterThanOrEqual(4);
    await expect
      .poll(() => runs.filter((run) => run.job === 'ticking').length, { timeout: 5_000 })
      .toBeGreaterThanOrEqual(2);
    const fast = runs.filter((run) => run.job === 'fast').map((run) => run.firedAt);
    for (let index = 1; index < fast.length; index++)
      expect((fast[index] as number) - (fast[index - 1] as number)).toBeGreaterThanOrEqual(100);
    for (const run of runs.filter((entry) => entry.job === 'ticking'))
      expect(run.firedAt % 1_000).toBe(0);
  });
});

describe('disabling a job worker', () => {
  const ITEMS = ['m1', 'm2', 'm3', 'm4'];
  const flagOf = (id: string): string => childPath(jobsNodes(JOBS).disabledWorkers, id);
  const define = (world: World): Promise<unknown> =>
    world.jobs.define({ name: 'mail', fn: 'hold', workPool: { items: ITEMS }, mode: 'continuous' });
  const held = (proc: Proc): string[] => proc.worker.heldItems()['mail'] ?? [];

  /** Passes of every process (workers, managers, workers again), `stepMs` of simulated time apart. */
  async function rounds(world: World, procs: readonly Proc[], count = 4, stepMs = 100) {
    for (let round = 0; round < count; round++) {
      for (const proc of procs) await proc.worker.pass();
      for (const proc of procs) await proc.manager.pass();
      for (const proc of procs) await proc.worker.pass();
      world.advance(stepMs);
      await sleep(5);
    }
  }

  it("moves a disabled worker's items to the others without stopping it, each only once its run has ended and its lease is released, so no item is ever worked on by two; enabling brings items back", async () => {
    const manual = new ManualScheduler();
    const world = new World(new MemoryZooKeeper({ scheduler: manual }));
    const logs: Record<string, Activity> = { a: activity(), b: activity() };
    const a = world.spawn('a', { hold: holder(logs['a'] as Activity) });
    const b = world.spawn('b', { hold: holder(logs['b'] as Activity) });
    const twice = new Set<string>();
    // Looked at before every ZooKeeper operation lands, and after each pass.
    const noItemWorkedByTwo = (): boolean => {
      for (const item of ITEMS)
        if (Object.values(logs).flatMap((log) => workingOn(log, item)).length > 1) twice.add(item);
      return false;
    };
    const step = (work: Promise<unknown>): Promise<void> => run(manual, work, noItemWorkedByTwo);
    const steppedRounds = async (count: number): Promise<void> => {
      for (let round = 0; round < count; round++) {
        for (const proc of [a, b]) await step(proc.worker.pass());
        for (const proc of [a, b]) await step(proc.manager.pass());
        for (const proc of [a, b]) await step(proc.worker.pass());
        world.advance(100);
        await sleep(5);
        noItemWorkedByTwo();
      }
    };
    await step(define(world));
    await steppedRounds(4);
    expect([held(a), held(b)]).toEqual([
      ['m1', 'm2'],
      ['m3', 'm4'],
    ]);

    let disabled: boolean | undefined;
    await step(world.jobs.disableWorker('a').then((changed) => (disabled = changed)));
    expect(disabled).toBe(true);
    await steppedRounds(4);
    expect([held(a), held(b)]).toEqual([[], ITEMS]);
    for (const item of ITEMS) expect(workingOn(logs['b'] as Activity, item)).toHaveLength(1);
    expect(a.events.filter((event) => event.startsWith('stopped'))).toEqual([
      'stopped mail/m1 released',
      'stopped mail/m2 released',
    ]);
    let workers: Awaited<ReturnType<World['jobs']['workers']>> = [];
    await step(world.jobs.workers().then((read) => (workers = read)));
    expect(workers.map((worker) => [worker.id, worker.disabled])).toEqual([
      ['a', true],
      ['b', false],
    ]);

    let enabled: boolean | undefined;
    await step(world.jobs.enableWorker('a').then((changed) => (enabled = changed)));
    expect(enabled).toBe(true);
    await steppedRounds(4);
    expect(held(a)).toHaveLength(2);
    expect(held(b)).toHaveLength(2);
    expect([...twice]).toEqual([]);
    expect([...a.errors, ...b.errors]).toEqual([]);
  });

  it('refuses an id no live worker has (JOB_WORKER_NOT_LIVE, naming it and where the live ones are listed) and one that is no worker id (INVALID_ARGUMENT), writing nothing', async () => {
    const world = new World();
    const a = world.spawn('a', { hold: holder(activity()) });
    await a.worker.pass();
    const unknown = await expectRejects(() => world.jobs.disableWorker('a-1a2b3c4d'), JobError);
    expect([unknown.code, unknown.path]).toEqual([
      'JOB_WORKER_NOT_LIVE',
      childPath(jobsNodes(JOBS).workers, 'a-1a2b3c4d'),
    ]);
    expect(unknown.message).toBe(
      `No live job worker "a-1a2b3c4d" under ${JOBS}: only a live one can be disabled, and a worker's id changes with every start (jobs(parent).workers() lists the live ones)`,
    );
    expect(unknown.cliMessage).toContain(`(zk-plan workers --jobs ${JOBS} lists the live ones)`);
    for (const bad of ['', '-a', '../a', 'a/b', 'a b', 'x'.repeat(101), 7]) {
      const disabling = await expectRejects(
        () => world.jobs.disableWorker(bad as string),
        InvalidArgumentError,
      );
      expect([disabling.argument, disabling.message]).toEqual([
        'id',
        expect.stringContaining(`got ${JSON.stringify(bad)}`),
      ]);
      await expectRejects(() => world.jobs.enableWorker(bad as string), InvalidArgumentError);
    }
    expect(world.server.exists(jobsNodes(JOBS).disabledWorkers)).toBe(false);
  });

  it('takes every id a job worker can have: the ids newJobWorkerId makes, with or without a name', () => {
    for (const prefix of [undefined, 'w', 'mail-poller.eu:2_b', 'n'.repeat(64)]) {
      const id = newJobWorkerId(prefix);
      expect(id).toMatch(/-[0-9a-f]{8}$/);
      expect(() => assertJobWorkerId(id)).not.toThrow();
    }
  });

  it('is safe to repeat: disable and enable say whether they changed anything; the flag is a persistent node that outlives its worker, recording when and by whom', async () => {
    const world = new World();
    const a = world.spawn('a', { hold: holder(activity()) });
    await a.worker.pass();
    expect(await world.jobs.disableWorker('a')).toBe(true);
    expect(await world.jobs.disableWorker('a')).toBe(false);
    expect(decodeValue(flagOf('a'), world.server.getData(flagOf('a')))).toEqual({
      disabledAt: new Date(world.now).toISOString(),
      by: expect.stringMatching(/^.+:\d+$/),
    });
    expect((await world.jobs.workers()).map((worker) => worker.disabled)).toEqual([true]);
    await a.worker.stop();
    expect(await world.jobs.workers()).toEqual([]);
    expect(await world.jobs.disableWorker('a')).toBe(false); // disabled, then gone: nothing to refuse
    expect(world.server.exists(flagOf('a'))).toBe(true);
    expect(await world.jobs.enableWorker('a')).toBe(true);
    expect(await world.jobs.enableWorker('a')).toBe(false);
    expect(world.server.exists(flagOf('a'))).toBe(false);
  });

  it('keeps the flag while its worker replaces an expired session under the same id; the manager deletes it once the worker has been gone for the grace, and a flag no worker could have too', async () => {
    const world = new World();
    const a = world.spawn('a', { hold: holder(activity()) });
    const b = world.spawn('b', { hold: holder(activity()) });
    await define(world);
    await rounds(world, [a, b]);
    expect(await world.jobs.disableWorker('a')).toBe(true);
    await world.admin.create(flagOf('no-such-worker'), Buffer.from('{}'));
    await rounds(world, [a, b]);
    expect([held(a), held(b)]).toEqual([[], ITEMS]);

    // a's session expires: the manager (b from now on) sees a without a node before a registers
    // again on its new session, under its id, within the grace.
    a.zk.expireSession();
    await sleep(5);
    for (const proc of [a, b]) await proc.manager.pass();
    expect(world.server.exists(childPath(jobsNodes(JOBS).workers, 'a'))).toBe(false);
    world.advance(FLAG_GRACE_MS - 100);
    await rounds(world, [a, b]);
    expect(world.server.exists(childPath(jobsNodes(JOBS).workers, 'a'))).toBe(true);
    world.advance(FLAG_GRACE_MS);
    await rounds(world, [a, b]);
    expect(world.server.exists(flagOf('a'))).toBe(true);
    expect([held(a), held(b)]).toEqual([[], ITEMS]);
    expect(world.server.exists(flagOf('no-such-worker'))).toBe(false);

    await a.worker.stop();
    await a.manager.leave();
    await rounds(world, [b], 1); // b, manager now, sees a gone; then 100 ms pass
    world.advance(FLAG_GRACE_MS - 200);
    await rounds(world, [b], 1);
    expect(world.server.exists(flagOf('a'))).toBe(true); // gone for 100 ms less than the grace
    await rounds(world, [b], 1);
    expect(world.server.exists(flagOf('a'))).toBe(false);
    expect(b.errors).toEqual([]);
  });

  it("disables a worker whatever its flag holds (the node is the flag); the job's problem says when every worker with its function is disabled", async () => {
    const world = new World();
    const b = world.spawn('b', { hold: holder(activity()) });
    await define(world);
    await rounds(world, [b]);
    expect(held(b)).toEqual(ITEMS);
    await world.admin.ensurePath(jobsNodes(JOBS).disabledWorkers);
    await world.admin.create(flagOf('b'), Buffer.from('not a flag record'));
    await rounds(world, [b]);
    expect(held(b)).toEqual([]);
    const [job] = await world.jobs.list();
    expect(job?.problem).toBe(
      'the one live job worker that registered the function "hold" is disabled: its 4 items wait until one is enabled (enableWorker, zk-plan jobs enable-worker)',
    );
    expect(job?.unassigned).toEqual(ITEMS);
    expect(b.errors).toEqual([]);
    expect(await world.jobs.enableWorker('b')).toBe(true);
    await rounds(world, [b]);
    expect(held(b)).toEqual(ITEMS);
    expect((await world.jobs.list())[0]?.problem).toBeUndefined();
  });
});
