/**
 * Shell tasks on a real ZooKeeper server, run by real worker pools (and a `zk-plan worker
 * --allow-shell` process): exit 0, exit 3, a timeout and a cancel that stop a process group with
 * a grandchild (no process left), a drain on SIGTERM, and the opt-in refusal.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  PlanCancelledError,
  ShellDisabledError,
  ShellExitError,
  TaskTimeoutError,
  call,
  type ShellParams,
  type ZkPlan,
  type ZkPlanEvents,
} from '../src/index.js';
import { processIsRunning } from '../src/shell/process-group.js';
import { runCli } from './support/run-cli.js';
import { WorkerProcess, faultWorkerSpec } from './support/worker-process.js';
import { TIMING, nextEvent, useZooKeeper, waitFor } from './support/zk-test-env.js';

const env = useZooKeeper('shell');
const QUICK = { backoff: { initial: 10, max: 50 }, retention: false } as const;
const SHELL_WORKERS = { ...QUICK, allowShell: true, shellKillGraceMs: 300 } as const;

type Failed = ZkPlanEvents['task:failed'][0];

let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'zk-plan-shell-integ-'));
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A plan under a new parent holding one shell task; returns the plan and the task. */
async function shellPlan(
  zkPlan: ZkPlan,
  params: ShellParams,
  options: { timeoutMs?: number; maxAttempts?: number } = {},
): Promise<[string, string]> {
  const plan = await zkPlan.createPlan(env.root());
  const task = await zkPlan.addTask(plan, call('shell', params), [], {
    keepResult: true,
    ...options,
  });
  await zkPlan.markAsReady(plan);
  return [plan, task];
}

function parentOf(plan: string): string {
  return plan.slice(0, plan.lastIndexOf('/'));
}

/** The pid a command wrote to `file`, once it has. */
function pidWrittenTo(file: string): Promise<number> {
  return waitFor(`a pid in ${file}`, async () => {
    const text = await readFile(file, 'utf8').catch(() => '');
    return /^\d+\n$/.test(text) ? Number(text.trim()) : undefined;
  });
}

/** A command that starts a grandchild sleeping for a minute, writes its pid to `file`, and waits for it. */
function grandchildCommand(file: string): ShellParams {
  return { command: `sleep 60 & echo $! > ${file}; echo waiting; wait` };
}

async function expectGone(pid: number): Promise<void> {
  await waitFor(`process ${pid} to be gone`, async () => !(await processIsRunning(pid)), {
    timeoutMs: 5_000,
  });
}

describe('shell tasks', () => {
  it('exit 0: the result is { exitCode: 0, stdout }, and each output line is in the task’s log (stdout at info, stderr at warn)', async () => {
    const zkPlan = await env.zkPlan();
    const [plan, task] = await shellPlan(zkPlan, {
      command: 'echo "hello from $1"; echo "a note" >&2; echo bye',
      args: ['shell'],
      shell: true,
    });
    zkPlan.startWorkers(parentOf(plan), SHELL_WORKERS);
    await zkPlan.waitForCompletion(plan, { timeoutMs: 10_000 * TIMING });
    expect(await zkPlan.getResult(task)).toEqual({
      exitCode: 0,
      stdout: 'hello from shell\nbye\n',
    });
    const [attempt] = await zkPlan.logs.read(task);
    const output = attempt?.lines
      .filter((line) => line.fields?.['stream'] !== undefined)
      .map(({ level, msg, fields }) => [level, msg, fields?.['stream']]);
    expect(output).toHaveLength(3);
    expect(output).toEqual(
      expect.arrayContaining([
        ['info', 'hello from shell', 'stdout'],
        ['warn', 'a note', 'stderr'],
        ['info', 'bye', 'stdout'],
      ]),
    );
    expect(output?.filter(([, , stream]) => stream === 'stdout')).toEqual([
      ['info', 'hello from shell', 'stdout'],
      ['info', 'bye', 'stdout'],
    ]);
    expect(attempt?.lines.at(-1)?.msg).toMatch(/^exited with code 0 in \d+ ms$/);
  });

  it('exit 3: the try fails with SHELL_EXIT naming the task, the code and the last lines of stderr, charged', async () => {
    const zkPlan = await env.zkPlan();
    const [plan, task] = await shellPlan(
      zkPlan,
      { command: 'echo working; echo "cannot reach db" >&2; exit 3' },
      { maxAttempts: 1 },
    );
    const failed = nextEvent<Failed>(zkPlan, 'task:failed', (event) => event.task === task);
    zkPlan.startWorkers(parentOf(plan), SHELL_WORKERS);
    const failure = await failed;
    expect(failure.error).toBeInstanceOf(ShellExitError);
    expect(failure).toMatchObject({ charged: true, final: true });
    const error = failure.error as ShellExitError;
    expect(error).toMatchObject({
      code: 'SHELL_EXIT',
      exitCode: 3,
      stderrTail: ['cannot reach db'],
    });
    expect(error.message).toContain(task);
    const [attempt] = await zkPlan.logs.read(task);
    expect(attempt?.lines.map((line) => line.msg)).toEqual(
      expect.arrayContaining([
        'working',
        'cannot reach db',
        expect.stringMatching(/^exited with code 3 after/),
      ]),
    );
    const status = await zkPlan.plans.status(plan);
    expect(status.failed.map((failed) => failed.task)).toEqual([task]);
    expect(status.failed[0]?.failure).toMatchObject({ code: 'SHELL_EXIT', attempts: 1 });
    expect(status.failed[0]?.failure?.message).toContain(
      'exited with code 3; last lines of stderr:\ncannot reach db',
    );
  });

  it('a timeout stops the whole process group: the grandchild is gone, the try fails with TASK_TIMEOUT', async () => {
    const zkPlan = await env.zkPlan();
    const pidFile = join(dir, 'timeout.pid');
    const [plan, task] = await shellPlan(zkPlan, grandchildCommand(pidFile), {
      timeoutMs: 1_500 * TIMING,
      maxAttempts: 1,
    });
    const failed = nextEvent<Failed>(zkPlan, 'task:failed', (event) => event.task === task);
    zkPlan.startWorkers(parentOf(plan), SHELL_WORKERS);
    const grandchild = await pidWrittenTo(pidFile);
    expect(await processIsRunning(grandchild)).toBe(true);
    const failure = await failed;
    expect(failure.error).toBeInstanceOf(TaskTimeoutError);
    expect(failure.charged).toBe(true);
    await expectGone(grandchild);
  });

  it('a cancel stops the whole process group: the grandchild is gone, the try is not charged', async () => {
    const zkPlan = await env.zkPlan();
    const pidFile = join(dir, 'cancel.pid');
    const [plan, task] = await shellPlan(zkPlan, grandchildCommand(pidFile));
    const failed = nextEvent<Failed>(zkPlan, 'task:failed', (event) => event.task === task);
    zkPlan.startWorkers(parentOf(plan), SHELL_WORKERS);
    const grandchild = await pidWrittenTo(pidFile);
    await zkPlan.control.cancel(plan, { reason: 'shell test' });
    const failure = await failed;
    expect(failure.error).toBeInstanceOf(PlanCancelledError);
    expect(failure.charged).toBe(false);
    await expectGone(grandchild);
  });

  it('without allowShell a worker leaves the task, uncharged, saying how to enable shell tasks; a worker with it runs the task', async () => {
    const plain = await env.zkPlan();
    const [plan, task] = await shellPlan(plain, { command: 'echo ran' });
    const failures: Failed[] = [];
    plain.on('task:failed', (event) => failures.push(event));
    plain.startWorkers(parentOf(plan), { ...QUICK, count: 2 });
    await waitFor('the plain worker to give the shell task back', () => failures.length > 0);
    expect(failures[0]?.error).toBeInstanceOf(ShellDisabledError);
    expect(failures[0]?.error.message).toContain('zk-plan worker --allow-shell');
    expect(failures[0]?.charged).toBe(false);
    expect(await plain.zk.exists(`${task}/attempts`)).toBeUndefined();
    const explanation = await plain.explain.task(task);
    expect(explanation).toMatchObject({
      code: 'NO_WORKER_FOR_FUNCTION',
      remedy: { cli: expect.stringContaining('--allow-shell') as string },
    });
    expect((await plain.explain.plan(plan)).reasons[0]?.remedy?.cli).toContain('--allow-shell');
    const why = await runCli(env.connectString, ['why', plan]);
    expect(why.code).toBe(0);
    expect(why.stdout).toContain('NO_WORKER_FOR_FUNCTION (1)');
    expect(why.stdout).toContain(
      `no live worker allows shell tasks (each leaves them to one that does); zk-plan worker --parent ${parentOf(plan)}`,
    );
    expect(why.stdout).toContain('--allow-shell starts a worker that runs it');

    const shellWorker = await env.zkPlan();
    shellWorker.startWorkers(parentOf(plan), SHELL_WORKERS);
    await plain.waitForCompletion(plan, { timeoutMs: 10_000 * TIMING });
    expect(await plain.getResult(task)).toEqual({ exitCode: 0, stdout: 'ran\n' });
    expect(failures).toHaveLength(1); // the plain pool took it once, then left it
  });

  it('zk-plan worker --allow-shell runs shell tasks, echoes their output, and on SIGTERM stops a running one’s group past the drain timeout', async () => {
    const zkPlan = await env.zkPlan();
    const pidFile = join(dir, 'drain.pid');
    const [done] = await shellPlan(zkPlan, { command: 'echo first-line; echo second-line >&2' });
    const parent = parentOf(done);
    const [, running] = await (async (): Promise<[string, string]> => {
      const plan = await zkPlan.createPlan(parent);
      const task = await zkPlan.addTask(plan, call('shell', grandchildCommand(pidFile)));
      await zkPlan.markAsReady(plan);
      return [plan, task];
    })();
    const worker = WorkerProcess.spawn(
      'shell-worker',
      faultWorkerSpec({
        connect: env.connectString,
        parent,
        logFile: join(dir, 'executions.log'),
        loops: 2,
        drainTimeoutMs: 200,
        extraArgs: [
          '--allow-shell',
          '--shell-kill-grace-ms',
          '300',
          '--no-retention',
          '--log-format',
          'plain',
        ],
      }),
    );
    try {
      await worker.ready();
      await zkPlan.waitForCompletion(done, { timeoutMs: 10_000 * TIMING });
      const grandchild = await pidWrittenTo(pidFile);
      const exit = await worker.terminate();
      expect(exit.code).toBe(0);
      await expectGone(grandchild);
      expect(worker.output).toContain('first-line');
      expect(worker.output).toContain('second-line');
      expect(await zkPlan.zk.exists(running)).toBeDefined(); // released by the drain, for another worker
    } finally {
      await worker.forceStop();
    }
  });
});
