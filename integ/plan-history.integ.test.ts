/**
 * History on by default (issue 21), on a real server: a completed, a failed and a cancelled plan
 * show every task with its state, call, attempts, worker and times in describePlan and in
 * `zk-plan show --json`; `zk-plan wait` and `zk-plan plans` count a plan joined late against its
 * total from the start, as planStatus does; a plan created with { history: false } still works.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import {
  FunctionRegistry,
  PermanentError,
  call,
  type PlanSummary,
  type PlanView,
  type TaskView,
} from '../src/index.js';
import { cliEnv, runCli, type CliRun } from './support/run-cli.js';
import { TIMING, useZooKeeper, waitFor } from './support/zk-test-env.js';

const env = useZooKeeper('plan-history');
const QUICK = { backoff: { initial: 10, max: 50 } } as const;

const run = (args: string[]): Promise<CliRun> => runCli(env.connectString, args);

/** `hold` runs until `release()`, whatever its signal says; `value` returns its param; `boom` fails for good. */
function functionsWithGate(): { functions: FunctionRegistry; release: () => void } {
  let release = (): void => undefined;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const functions = new FunctionRegistry()
    .register('value', (ctx) => ctx.params[0])
    // Ignores its signal: its worker holds it (its owner node stays) until it is released.
    .register('hold', async () => {
      await gate;
      return 'held';
    })
    .register('boom', () => {
      throw new PermanentError('the disk is full', { code: 'DISK_FULL' });
    });
  return { functions, release };
}

/** The plan view `zk-plan show --json` prints (dates as ISO text). */
async function shownJson(plan: string): Promise<PlanView> {
  const shown = await run(['show', plan, '--json']);
  expect(shown.code, shown.stderr).toBe(0);
  return JSON.parse(shown.stdout) as PlanView;
}

function stateOf(view: PlanView, task: string): TaskView | undefined {
  return view.tasks.find((entry) => entry.task === task);
}

describe('a finished plan remembers what ran', () => {
  it('completed, failed and cancelled plans show every task with its state, call, attempts, worker and times, in describePlan and show --json', async () => {
    const { functions, release } = functionsWithGate();
    const zkPlan = await env.zkPlan({ functions });
    const parent = env.root();
    const completed = await zkPlan.createPlan(parent);
    const [one, two] = (await zkPlan.addTasks(completed, [
      { task: call('value', 1) },
      { task: call('value', 2), args: [0] },
    ])) as [string, string];
    await zkPlan.markAsReady(completed);
    const failed = await zkPlan.createPlan(parent, { maxAttempts: 1 });
    const [ok, boom, behind] = (await zkPlan.addTasks(failed, [
      { task: call('value', 3) },
      { task: call('boom') },
      { task: call('value', 4), args: [1] },
    ])) as [string, string, string];
    await zkPlan.markAsReady(failed);
    const pool = zkPlan.startWorkers(parent, { count: 2, ...QUICK });
    await zkPlan.waitForCompletion(completed, { timeoutMs: 20_000 * TIMING });
    await expect(zkPlan.waitForCompletion(failed, { timeoutMs: 20_000 * TIMING })).rejects.toThrow(
      /failed/,
    );

    // A cancelled plan: one task done, one running, one waiting for it.
    const cancelled = await zkPlan.createPlan(parent);
    const [first, held, waiting] = (await zkPlan.addTasks(cancelled, [
      { task: call('value', 5) },
      { task: call('hold'), args: [0] },
      { task: call('value', 6), args: [1] },
    ])) as [string, string, string];
    await zkPlan.markAsReady(cancelled);
    await waitFor(
      'the held task to run',
      async () => stateOf(await zkPlan.plans.describe(cancelled), held)?.state === 'running',
    );
    await zkPlan.control.cancel(cancelled, { reason: 'enough' });
    release();
    await pool.stop();

    for (const view of [await zkPlan.plans.describe(completed), await shownJson(completed)]) {
      expect(view.tasks.map(({ task, state, fn }) => [task, state, fn])).toEqual([
        [one, 'done', 'value'],
        [two, 'done', 'value'],
      ]);
      expect(stateOf(view, two)).toMatchObject({
        params: [2],
        inputs: [one],
        workerId: expect.stringMatching(/\/\d+$/),
        startedAt: expect.anything(),
      });
      expect(view.status.counts).toMatchObject({ total: 2, done: 2 });
    }
    for (const view of [await zkPlan.plans.describe(failed), await shownJson(failed)]) {
      expect(view.tasks.map(({ task, state }) => [task, state])).toEqual([
        [ok, 'done'],
        [boom, 'failed'],
        [behind, 'blocked'],
      ]);
      expect(stateOf(view, boom)).toMatchObject({
        failedTries: 1,
        failure: { code: 'DISK_FULL', attempts: 1 },
        workerId: expect.any(String),
      });
      expect(view.status).toMatchObject({
        state: 'failed',
        counts: { total: 3, done: 1, failed: 1, blocked: 1 },
      });
    }
    for (const view of [await zkPlan.plans.describe(cancelled), await shownJson(cancelled)]) {
      expect(view.tasks.map(({ task, state, was }) => [task, state, was])).toEqual([
        [first, 'done', undefined],
        [held, 'cancelled', 'running'],
        [waiting, 'unstarted', 'waiting'],
      ]);
      expect(stateOf(view, held)).toMatchObject({
        fn: 'hold',
        workerId: expect.stringMatching(/\/\d+$/),
        startedAt: expect.anything(),
        cancelledAt: expect.anything(),
      });
      expect(view.status).toMatchObject({
        state: 'cancelled',
        counts: { total: 3, done: 1, cancelled: 1, unstarted: 1 },
      });
    }
    const table = await run(['show', cancelled]);
    expect(table.stdout).toContain(
      `${cancelled}: cancelled, 3 task(s): 1 done, 1 cancelled, 1 unstarted`,
    );
    expect(table.stdout).toMatch(
      /task-\d+\s+cancelled\s+hold\(\)\s+task-\d+\s+\S+\/\d+\s+\d\d:\d\d:\d\d\s+\d\d:\d\d:\d\d\s+\S+\s+cancelled while running/,
    );
    expect(table.stdout).toMatch(
      /task-\d+\s+unstarted\s+value\(6\).*never started: it waited for inputs when its plan was cancelled/,
    );
  });

  it('wait and plans count a plan joined late against its total from the start, as planStatus does', async () => {
    const { functions, release } = functionsWithGate();
    const zkPlan = await env.zkPlan({ functions });
    const parent = env.root();
    const plan = await zkPlan.createPlan(parent);
    // 29 tasks: 10 that run at once, one held, 18 behind it.
    const quick = Array.from({ length: 10 }, (_, index) => ({ task: call('value', index) }));
    const behind = Array.from({ length: 18 }, (_, index) => ({
      task: call('value', 100 + index),
      args: [10],
    }));
    await zkPlan.addTasks(plan, [...quick, { task: call('hold') }, ...behind]);
    await zkPlan.markAsReady(plan);
    zkPlan.startWorkers(parent, { count: 2, ...QUICK });
    await waitFor(
      'the first 10 tasks to be done',
      async () => (await zkPlan.plans.status(plan)).counts.done === 10,
    );

    const [plans, plansJson, status] = await Promise.all([
      run(['plans', parent]),
      run(['plans', parent, '--json']),
      zkPlan.plans.status(plan),
    ]);
    expect(plans.stdout).toMatch(new RegExp(`${plan}\\s+running\\s+10/29\\s+0`));
    expect((JSON.parse(plansJson.stdout) as PlanSummary[])[0]?.status.counts).toEqual(
      status.counts,
    );
    expect(status.counts).toMatchObject({ total: 29, done: 10, remaining: 19 });

    // wait joins now: its first line counts the 10 done before it started, its last all 29.
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'wait', plan], {
      env: cliEnv(env.connectString),
    });
    let stderr = '';
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += String(chunk)));
    child.stderr.on('data', (chunk: Buffer) => (stderr += String(chunk)));
    await waitFor('wait to print its first progress line', () => stderr.includes('\n'), {
      timeoutMs: 20_000,
    });
    expect(stderr.split('\n')[0]).toMatch(/^plan-\d+: 10\/29 done \(34%\), /);
    release();
    const [code] = (await once(child, 'close')) as [number | null];
    expect(code).toBe(0);
    expect(stderr.trim().split('\n').at(-1)).toMatch(/^plan-\d+: 29\/29 done \(100%\), /);
    expect(stdout).toContain(`${plan} completed: 29 task(s) done`);
    const [after, finalStatus] = await Promise.all([
      run(['plans', parent]),
      zkPlan.plans.status(plan),
    ]);
    expect(after.stdout).toMatch(new RegExp(`${plan}\\s+completed\\s+29/29\\s+0`));
    expect(finalStatus.counts).toMatchObject({ total: 29, done: 29, remaining: 0 });
  });

  it('a plan created with { history: false } runs as before and keeps no record: show, plans and wait say how many tasks are left', async () => {
    const { functions } = functionsWithGate();
    const zkPlan = await env.zkPlan({ functions });
    const parent = env.root();
    const plan = await zkPlan.createPlan(parent, { history: false });
    const [first] = (await zkPlan.addTasks(plan, [
      { task: call('value', 1), options: { keepResult: true } },
      { task: call('value', 2), args: [0] },
    ])) as [string];
    await zkPlan.markAsReady(plan);
    expect((await run(['plans', parent])).stdout).toMatch(
      new RegExp(`${plan}\\s+running\\s+2 left\\s+0`),
    );
    const waiting = run(['wait', plan]);
    zkPlan.startWorkers(parent, { count: 1, ...QUICK });
    const waited = await waiting;
    expect(waited.code).toBe(0);
    expect(waited.stderr).not.toMatch(/\d+\/\d+ done/);
    expect(waited.stdout).toMatch(
      /completed: \d task\(s\) finished while waiting \(a plan without history\)/,
    );
    expect(await zkPlan.getResult(first)).toBe(1);
    const view = await zkPlan.plans.describe(plan);
    expect(view).toMatchObject({
      historyKept: false,
      tasks: [],
      status: { state: 'completed', counts: { total: 0, done: 0 } },
    });
    expect((await run(['show', plan])).stdout).toContain(
      'no tasks left (the plan was created with { history: false }',
    );
  });
});
