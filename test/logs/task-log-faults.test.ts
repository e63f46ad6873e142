/**
 * The task-log protocol under faults, over the in-memory ZooKeeper: a lost reply at each of its
 * writes (the try node's create, its later setData, the plan budget's compare-and-set), a session
 * expiry while a try logs, and its plan deleted under a running task. Each must leave one node per
 * try with the lines flushed, a budget that never undercounts, and no recreated plan.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { FunctionRegistry } from '../../src/exec/function-registry.js';
import type { TaskContext } from '../../src/exec/task-context.js';
import { call } from '../../src/exec/task-spec.js';
import { encodeAttemptLog } from '../../src/logs/attempt-log-record.js';
import { taskLogsPath } from '../../src/logs/task-log-store.js';
import { MemoryZooKeeper } from '../../src/testing/index.js';
import { LOGS, LOG_TRY_PREFIX, childPath } from '../../src/zk/layout.js';
import { FAST_BACKOFF, memoryProcess, pause, type MemoryProcess } from '../support/memory-plan.js';

const PARENT = '/plans';
type Ctx = TaskContext<unknown[]>;
const opened: MemoryProcess[] = [];

afterEach(async () => {
  await Promise.all(opened.splice(0).map((proc) => proc.zkPlan.close()));
});

/** A gate the task waits on between its two bursts of lines. */
function gate(): { wait: Promise<void>; open: () => void } {
  let open = (): void => undefined;
  const wait = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { wait, open };
}

/** `talk` logs `first 1..3`, waits for the gate, logs `second 1..3`, returns. */
function talking(between: { wait: Promise<void> }): FunctionRegistry {
  return new FunctionRegistry().register('talk', async (ctx: Ctx) => {
    for (let i = 1; i <= 3; i++) ctx.log.info(`first ${i}`);
    await between.wait;
    for (let i = 1; i <= 3; i++) ctx.log.info(`second ${i}`);
    return 'ok';
  });
}

async function setUp(
  functions: FunctionRegistry,
): Promise<{ proc: MemoryProcess; server: MemoryZooKeeper; plan: string; task: string }> {
  const server = new MemoryZooKeeper();
  const proc = memoryProcess(server, 'p', functions);
  opened.push(proc);
  const plan = await proc.zkPlan.createPlan(PARENT, { initialDelayMs: 0 });
  const task = await proc.zkPlan.addTask(plan, call('talk'));
  await proc.zkPlan.markAsReady(plan);
  return { proc, server, plan, task };
}

/** Arms a lost reply for the first operation `matches` picks, and tells how many it hit (1 once it fired). */
function loseReplyOf(
  proc: MemoryProcess,
  matches: (op: string, path: string) => boolean,
): { hits: () => number } {
  let hits = 0;
  proc.zk.loseNextReply((op, path) => {
    const hit = matches(op, path);
    if (hit) hits += 1;
    return hit;
  });
  return { hits: () => hits };
}

const TASK_LOGS = { echo: false, sink: false, flushIntervalMs: 20 } as const;

async function messages(proc: MemoryProcess, task: string): Promise<string[][]> {
  return (await proc.zkPlan.logs.read(task)).map((attempt) => attempt.lines.map(({ msg }) => msg));
}

describe('the task-log protocol under faults', () => {
  it('a lost reply of the try node create is resent as a setData: one node, every line', async () => {
    const between = gate();
    const { proc, server, plan, task } = await setUp(talking(between));
    const lost = loseReplyOf(
      proc,
      (op, path) => op === 'create' && path.includes(`/${LOG_TRY_PREFIX}`),
    );
    const pool = proc.zkPlan.startWorkers(PARENT, { backoff: FAST_BACKOFF, taskLogs: TASK_LOGS });
    await expect.poll(() => messages(proc, task)).toEqual([['first 1', 'first 2', 'first 3']]);
    between.open();
    await proc.zkPlan.waitForCompletion(plan, { timeoutMs: 5_000 });
    await pool.stop();
    expect(lost.hits()).toBe(1);
    expect(server.children(taskLogsPath(task))).toHaveLength(1);
    expect(await messages(proc, task)).toEqual([
      ['first 1', 'first 2', 'first 3', 'second 1', 'second 2', 'second 3'],
    ]);
  });

  it("a lost reply of a later flush's setData leaves the record whole", async () => {
    const between = gate();
    const { proc, plan, task } = await setUp(talking(between));
    const pool = proc.zkPlan.startWorkers(PARENT, { backoff: FAST_BACKOFF, taskLogs: TASK_LOGS });
    await expect.poll(() => messages(proc, task)).toEqual([['first 1', 'first 2', 'first 3']]);
    const lost = loseReplyOf(
      proc,
      (op, path) => op === 'setData' && path.includes(`/${LOG_TRY_PREFIX}`),
    );
    between.open();
    await proc.zkPlan.waitForCompletion(plan, { timeoutMs: 5_000 });
    await pool.stop();
    expect(lost.hits()).toBe(1);
    const [attempt] = await proc.zkPlan.logs.read(task);
    expect(attempt?.lines.map(({ msg }) => msg)).toEqual([
      'first 1',
      'first 2',
      'first 3',
      'second 1',
      'second 2',
      'second 3',
    ]);
    expect(attempt?.finishedAt).toBeInstanceOf(Date);
  });

  it("a lost reply of the budget's compare-and-set counts the bytes at most twice, never less than the tails written", async () => {
    const between = gate();
    const { proc, server, plan, task } = await setUp(talking(between));
    const lost = loseReplyOf(
      proc,
      (op, path) => op === 'setData' && path === childPath(plan, LOGS),
    );
    const pool = proc.zkPlan.startWorkers(PARENT, { backoff: FAST_BACKOFF, taskLogs: TASK_LOGS });
    between.open();
    await proc.zkPlan.waitForCompletion(plan, { timeoutMs: 5_000 });
    await pool.stop();
    expect(lost.hits()).toBe(1);
    const reserved = (
      JSON.parse(String(server.getData(childPath(plan, LOGS)))) as { reservedBytes: number }
    ).reservedBytes;
    const [attempt] = await proc.zkPlan.logs.read(task);
    if (attempt === undefined) throw new Error('no log kept');
    expect(attempt.lines).toHaveLength(6);
    expect(reserved).toBeGreaterThanOrEqual(encodeAttemptLog(attempt).length);
    expect(reserved).toBeLessThanOrEqual(2 * 8 * 1024);
  });

  it('a session expiry while a try logs: the lost try keeps its lines, the re-run logs in a node of its own', async () => {
    const between = gate();
    let runs = 0;
    const functions = new FunctionRegistry().register('talk', async (ctx: Ctx) => {
      runs += 1;
      ctx.log.info(`run ${runs} begins`);
      if (runs === 1)
        await new Promise<void>((resolve) =>
          ctx.signal.addEventListener('abort', () => resolve(), { once: true }),
        );
      else await between.wait;
      ctx.log.info(`run ${runs} ends`);
      return runs;
    });
    const { proc, server, plan, task } = await setUp(functions);
    const pool = proc.zkPlan.startWorkers(PARENT, { backoff: FAST_BACKOFF, taskLogs: TASK_LOGS });
    await expect.poll(() => messages(proc, task)).toEqual([['run 1 begins']]);
    proc.zk.expireSession(); // the claim is lost; the function's signal aborts; the task is taken again on the new session
    await expect.poll(() => runs).toBe(2);
    between.open();
    await proc.zkPlan.waitForCompletion(plan, { timeoutMs: 5_000 });
    await pool.stop();
    expect(server.children(taskLogsPath(task))).toHaveLength(2);
    const tries = await proc.zkPlan.logs.read(task);
    expect(tries.map((attempt) => attempt.lines.map(({ msg }) => msg)).sort()).toEqual([
      ['run 1 begins', 'run 1 ends'],
      ['run 2 begins', 'run 2 ends'],
    ]);
    expect(tries.map(({ attempt }) => attempt)).toEqual([1, 1]); // a lost session is not charged to the task
  });

  it('a plan deleted under a task that logs: the writer stops, the deletion completes, nothing is recreated', async () => {
    const between = gate();
    const { proc, server, plan, task } = await setUp(talking(between));
    const pool = proc.zkPlan.startWorkers(PARENT, { backoff: FAST_BACKOFF, taskLogs: TASK_LOGS });
    await expect.poll(() => messages(proc, task)).toEqual([['first 1', 'first 2', 'first 3']]);
    await proc.zkPlan.plans.delete(plan);
    between.open(); // it logs three more lines and its last flush finds no plan
    await pause(100);
    await pool.stop();
    expect(server.exists(plan)).toBe(false);
  });
});
