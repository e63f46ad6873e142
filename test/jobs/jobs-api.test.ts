/** jobs(parent): definitions checked before anything is written, changes, triggers, removal and what list() shows, over the in-memory ZooKeeper. */
import { afterEach, describe, expect, it } from 'vitest';
import { JobError, JobNotFoundError } from '../../src/errors/job-errors.js';
import { MalformedNodeError } from '../../src/errors/task-errors.js';
import { InvalidArgumentError } from '../../src/errors/usage-errors.js';
import { FunctionRegistry, type JobContext, type JobDefinition } from '../../src/index.js';
import { poolItems, resolveJob } from '../../src/jobs/job-definition.js';
import { JobStore } from '../../src/jobs/job-store.js';
import { MemoryZooKeeper } from '../../src/testing/index.js';
import { jobNodes } from '../../src/zk/layout.js';
import { expectRejects, expectThrows } from '../support/expect-error.js';
import { memoryProcess, type MemoryProcess } from '../support/memory-plan.js';

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
