/**
 * Task logs over the in-memory ZooKeeper, run by real worker pools: ctx.log and console capture
 * kept apart per task, the tail flushed while a task runs and before its completion is recorded,
 * the bounds per try and per plan, followLog, taskLogs: false, and the file sink's pruning.
 */
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../../src/errors/usage-errors.js';
import { FunctionRegistry } from '../../src/exec/function-registry.js';
import type { TaskContext } from '../../src/exec/task-context.js';
import { call } from '../../src/exec/task-spec.js';
import { encodeAttemptLog } from '../../src/logs/attempt-log-record.js';
import { FileLogSink } from '../../src/logs/file-log-sink.js';
import type { FollowedLogLine } from '../../src/logs/task-log-reader.js';
import { MemoryZooKeeper } from '../../src/testing/index.js';
import { LOGS, childPath } from '../../src/zk/layout.js';
import { FAST_BACKOFF, memoryProcess, pause, type MemoryProcess } from '../support/memory-plan.js';
import { expectRejects } from '../support/expect-error.js';

const PARENT = '/plans';
type Ctx = TaskContext<unknown[]>;

const opened: MemoryProcess[] = [];
const dirs: string[] = [];

afterEach(async () => {
  await Promise.all(opened.splice(0).map((proc) => proc.zkPlan.close()));
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

function open(server: MemoryZooKeeper, functions: FunctionRegistry): MemoryProcess {
  const proc = memoryProcess(server, `p${opened.length}`, functions);
  opened.push(proc);
  return proc;
}

async function sinkDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'zk-plan-logs-test-'));
  dirs.push(dir);
  return dir;
}

/** A gate a task waits on until the test opens it. */
function gate(): { wait: Promise<void>; open: () => void } {
  let open = (): void => undefined;
  const wait = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { wait, open };
}

describe('task logs', () => {
  it('keeps what two concurrent tasks of one process log through ctx.log and console.log apart', async () => {
    const turn = [gate(), gate(), gate(), gate()];
    const functions = new FunctionRegistry().register('talk', async (ctx: Ctx) => {
      const [name, first, second] = ctx.params as [string, number, number];
      await turn[first]?.wait;
      console.log(`${name} console one`);
      ctx.log.info(`${name} ctx one`, { name });
      turn[first + 1]?.open();
      await turn[second]?.wait;
      await pause(1);
      console.error(`${name} console two`);
      ctx.log.warn(`${name} ctx two`);
      turn[second + 1]?.open();
      return name;
    });
    const proc = open(new MemoryZooKeeper(), functions);
    const plan = await proc.zkPlan.createPlan(PARENT);
    const a = await proc.zkPlan.addTask(plan, call('talk', 'a', 0, 2));
    const b = await proc.zkPlan.addTask(plan, call('talk', 'b', 1, 3));
    await proc.zkPlan.markAsReady(plan);
    const pool = proc.zkPlan.startWorkers(PARENT, {
      count: 2,
      backoff: FAST_BACKOFF,
      taskLogs: { echo: false, sink: false },
    });
    turn[0]?.open();
    await proc.zkPlan.waitForCompletion(plan, { timeoutMs: 5_000 });
    await pool.stop();
    for (const [task, name] of [
      [a, 'a'],
      [b, 'b'],
    ] as const) {
      const [attempt, ...others] = await proc.zkPlan.logs.read(task);
      expect(others).toEqual([]);
      expect(attempt).toMatchObject({ attempt: 1, truncated: false, droppedLines: 0 });
      expect(attempt?.finishedAt).toBeInstanceOf(Date);
      expect(attempt?.lines.map(({ level, msg, fields }) => ({ level, msg, fields }))).toEqual([
        { level: 'info', msg: `${name} console one`, fields: undefined },
        { level: 'info', msg: `${name} ctx one`, fields: { name } },
        { level: 'error', msg: `${name} console two`, fields: undefined },
        { level: 'warn', msg: `${name} ctx two`, fields: undefined },
      ]);
    }
  });

  it('writes the lines of a running task within the flush interval, and the last ones before its completion is recorded', async () => {
    const release = gate();
    const functions = new FunctionRegistry().register('slow', async (ctx: Ctx) => {
      ctx.log.info('started');
      await release.wait;
      ctx.log.info('last words');
      return 1;
    });
    const proc = open(new MemoryZooKeeper(), functions);
    const plan = await proc.zkPlan.createPlan(PARENT);
    const task = await proc.zkPlan.addTask(plan, call('slow'));
    await proc.zkPlan.markAsReady(plan);
    const pool = proc.zkPlan.startWorkers(PARENT, {
      backoff: FAST_BACKOFF,
      taskLogs: { echo: false, sink: false, flushIntervalMs: 300 },
    });
    const started = Date.now();
    let lines: string[] = [];
    while (lines.length === 0 && Date.now() - started < 5_000) {
      await pause(20);
      lines = (await proc.zkPlan.logs.read(task)).flatMap((attempt) =>
        attempt.lines.map(({ msg }) => msg),
      );
    }
    expect(lines).toEqual(['started']);
    expect(Date.now() - started).toBeLessThan(1_000); // flushIntervalMs 300, in memory: well within ~1 s
    expect((await proc.zkPlan.logs.read(task))[0]?.finishedAt).toBeUndefined();
    release.open();
    await proc.zkPlan.waitForCompletion(plan, { timeoutMs: 5_000 });
    const [attempt] = await proc.zkPlan.logs.read(task); // read right after completion: whole
    expect(attempt?.lines.map(({ msg }) => msg)).toEqual(['started', 'last words']);
    expect(attempt?.finishedAt).toBeInstanceOf(Date);
    await pool.stop();
  });

  it('keeps the tail of a task that logs 10 MB, and says how much was dropped', async () => {
    const line = 'x'.repeat(1_000);
    const functions = new FunctionRegistry().register('chatty', (ctx: Ctx) => {
      for (let i = 0; i < 10_000; i++) ctx.log.info(`${i} ${line}`);
      ctx.log.info('the end');
      return 'done';
    });
    const proc = open(new MemoryZooKeeper(), functions);
    const plan = await proc.zkPlan.createPlan(PARENT);
    const task = await proc.zkPlan.addTask(plan, call('chatty'));
    await proc.zkPlan.markAsReady(plan);
    const pool = proc.zkPlan.startWorkers(PARENT, {
      backoff: FAST_BACKOFF,
      taskLogs: { echo: false, sink: false },
    });
    await proc.zkPlan.waitForCompletion(plan, { timeoutMs: 10_000 });
    await pool.stop();
    const [attempt] = await proc.zkPlan.logs.read(task);
    if (attempt === undefined) throw new Error('no log kept');
    expect(attempt.truncated).toBe(true);
    expect(attempt.lines.at(-1)?.msg).toBe('the end');
    expect(attempt.droppedLines + attempt.lines.length).toBe(10_001);
    expect(attempt.firstIndex).toBe(attempt.droppedLines);
    expect(attempt.droppedBytes).toBeGreaterThan(9_000_000);
    expect(encodeAttemptLog(attempt).length).toBeLessThanOrEqual(8 * 1024);
  });

  it('keeps a plan of 1 000 chatty tasks under the plan cap', async () => {
    const functions = new FunctionRegistry().register('chatty', (ctx: Ctx) => {
      for (let i = 0; i < 40; i++) ctx.log.info(`line ${i} ${'y'.repeat(200)}`);
      return ctx.params[0];
    });
    const server = new MemoryZooKeeper();
    const proc = open(server, functions);
    const plan = await proc.zkPlan.createPlan(PARENT);
    const tasks = await proc.zkPlan.addTasks(
      plan,
      Array.from({ length: 1_000 }, (_, i) => ({ task: call('chatty', i) })),
    );
    await proc.zkPlan.markAsReady(plan);
    const maxBytesPerPlan = 512 * 1024;
    const pool = proc.zkPlan.startWorkers(PARENT, {
      count: 8,
      backoff: FAST_BACKOFF,
      taskLogs: { echo: false, sink: false, maxBytesPerPlan },
    });
    await proc.zkPlan.waitForCompletion(plan, { timeoutMs: 60_000 });
    await pool.stop();
    let stored = 0;
    let withTail = 0;
    for (const task of tasks) {
      for (const attempt of await proc.zkPlan.logs.read(task)) {
        stored += encodeAttemptLog(attempt).length;
        if (attempt.lines.length > 0) withTail += 1;
      }
    }
    expect(stored).toBeLessThanOrEqual(maxBytesPerPlan);
    // Full 8 KiB tails would fit 64 tries; the budget's shrinking shares keep the last lines of at least twice as many.
    expect(withTail).toBeGreaterThan(2 * (maxBytesPerPlan / (8 * 1024)));
    const budget = await proc.zk.getData(childPath(plan, LOGS));
    expect(JSON.parse(String(budget.data)).reservedBytes).toBeLessThanOrEqual(maxBytesPerPlan);
  }, 120_000);

  it('follows a running task: yields lines as they are flushed, across a retry, and ends when the task is done', async () => {
    const step = [gate(), gate()];
    let calls = 0;
    const functions = new FunctionRegistry().register('steps', async (ctx: Ctx) => {
      calls += 1;
      ctx.log.info(`try ${ctx.attempt} begins`);
      if (calls === 1) throw new Error('first try fails');
      await step[0]?.wait;
      ctx.log.info(`try ${ctx.attempt} ends`);
      return 'ok';
    });
    const proc = open(new MemoryZooKeeper(), functions);
    const plan = await proc.zkPlan.createPlan(PARENT, { initialDelayMs: 0 });
    const task = await proc.zkPlan.addTask(plan, call('steps'));
    await proc.zkPlan.markAsReady(plan);
    const pool = proc.zkPlan.startWorkers(PARENT, {
      backoff: FAST_BACKOFF,
      taskLogs: { echo: false, sink: false, flushIntervalMs: 50 },
    });
    const seen: FollowedLogLine[] = [];
    const following = (async () => {
      for await (const line of proc.zkPlan.logs.follow(task, { pollMs: 20 })) {
        seen.push(line);
        if (line.msg === 'try 2 begins') step[0]?.open();
      }
    })();
    await following;
    await pool.stop();
    expect(seen.map(({ attempt, msg, index }) => ({ attempt, msg, index }))).toEqual([
      { attempt: 1, msg: 'try 1 begins', index: 0 },
      { attempt: 2, msg: 'try 2 begins', index: 0 },
      { attempt: 2, msg: 'try 2 ends', index: 1 },
    ]);
    expect(await proc.zkPlan.planCompleted(plan)).toBe(true);
  });

  it('keeps nothing in ZooKeeper with taskLogs: false, and nothing for a try that logged nothing', async () => {
    const functions = new FunctionRegistry()
      .register('talk', (ctx: Ctx) => {
        ctx.log.info('said');
        return 1;
      })
      .register('quiet', () => 2);
    const proc = open(new MemoryZooKeeper(), functions);
    const plan = await proc.zkPlan.createPlan(PARENT);
    const talk = await proc.zkPlan.addTask(plan, call('talk'));
    const quiet = await proc.zkPlan.addTask(plan, call('quiet'));
    await proc.zkPlan.markAsReady(plan);
    const pool = proc.zkPlan.startWorkers(PARENT, { backoff: FAST_BACKOFF, taskLogs: false });
    await proc.zkPlan.waitForCompletion(plan, { timeoutMs: 5_000 });
    await pool.stop();
    expect(await proc.zkPlan.logs.read(talk)).toEqual([]);
    expect(await proc.zkPlan.logs.read(quiet)).toEqual([]);
    expect(await proc.zk.exists(childPath(plan, LOGS))).toBeUndefined();
  });

  it('writes the whole log to the file sink, names it in the record, and prunes it once the plan is deleted', async () => {
    const dir = await sinkDir();
    const functions = new FunctionRegistry().register('talk', (ctx: Ctx) => {
      for (let i = 0; i < 100; i++) ctx.log.info(`line ${i} ${'z'.repeat(200)}`);
      return 1;
    });
    const proc = open(new MemoryZooKeeper(), functions);
    const plan = await proc.zkPlan.createPlan(PARENT);
    const task = await proc.zkPlan.addTask(plan, call('talk'));
    await proc.zkPlan.markAsReady(plan);
    const sink = new FileLogSink({ dir });
    const pool = proc.zkPlan.startWorkers(PARENT, {
      backoff: FAST_BACKOFF,
      taskLogs: { echo: false, sink },
    });
    await proc.zkPlan.waitForCompletion(plan, { timeoutMs: 5_000 });
    await pool.stop();
    const [attempt] = await proc.zkPlan.logs.read(task);
    expect(attempt?.truncated).toBe(true); // 100 lines of ~250 bytes: over the 8 KiB tail
    const location = attempt?.fullLog?.location ?? '';
    const whole = (await readFile(location, 'utf8')).trim().split('\n');
    expect(whole).toHaveLength(100);
    expect(JSON.parse(whole[0] ?? '{}')).toMatchObject({
      level: 'info',
      msg: expect.stringMatching(/^line 0 /),
    });
    await sink.prune(async (path) => (await proc.zk.exists(path)) !== undefined);
    expect(await readFile(location, 'utf8')).not.toBe('');
    await proc.zkPlan.plans.delete(plan);
    await sink.prune(async (path) => (await proc.zk.exists(path)) !== undefined);
    expect(await readdir(dir, { recursive: true })).toEqual([encodeURIComponent(PARENT)]);
  });

  it('refuses a path that is not a task and an attempt below 1 with coded errors', async () => {
    const proc = open(new MemoryZooKeeper(), new FunctionRegistry());
    const plan = await proc.zkPlan.createPlan(PARENT);
    await expectRejects(() => proc.zkPlan.logs.read(plan), InvalidArgumentError);
    await expectRejects(
      () => proc.zkPlan.logs.read(`${plan}/task-0000000001`, { attempt: 0 }),
      InvalidArgumentError,
    );
    expect(await proc.zkPlan.logs.read(`${plan}/task-0000000001`)).toEqual([]);
    expect(() =>
      proc.zkPlan.startWorkers(PARENT, { taskLogs: { maxBytesPerAttempt: 10 } }),
    ).toThrow(InvalidArgumentError);
    expect(() => proc.zkPlan.startWorkers(PARENT, { taskLogs: { flushIntervalMs: 0.5 } })).toThrow(
      InvalidArgumentError,
    );
    expect(() => proc.zkPlan.startWorkers(PARENT, { taskLogs: { bogus: true } as never })).toThrow(
      InvalidArgumentError,
    );
  });
});
