/**
 * Task logs with real worker processes and a real ZooKeeper: a worker killed with kill -9 after
 * logging leaves the lines it flushed readable, the next try's log is kept beside the first, and
 * `zk-plan logs` prints, follows and finds a task's log by key.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { call } from '../src/index.js';
import { cliEnv, runCli } from './support/run-cli.js';
import { WorkerProcess, faultWorkerSpec } from './support/worker-process.js';
import { TIMING, useZooKeeper, waitFor } from './support/zk-test-env.js';

const env = useZooKeeper('task-logs');
const LOG_FUNCTIONS = join(import.meta.dirname, 'support', 'log-functions.ts');
const workers: WorkerProcess[] = [];
const dirs: string[] = [];

afterEach(async () => {
  await Promise.all(
    workers.splice(0).map(async (worker) => (worker.alive ? worker.kill9() : undefined)),
  );
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

async function startWorker(
  parent: string,
  extraArgs: readonly string[] = [],
): Promise<WorkerProcess> {
  const dir = await mkdtemp(join(tmpdir(), 'zk-plan-task-logs-'));
  dirs.push(dir);
  const worker = WorkerProcess.spawn(
    `w${workers.length}`,
    faultWorkerSpec({
      connect: env.connectString,
      parent,
      logFile: join(dir, 'executions.log'),
      functionsModule: LOG_FUNCTIONS,
      sessionTimeoutMs: 4_000,
      extraArgs: ['--task-log-dir', join(dir, 'logs'), ...extraArgs],
    }),
  );
  workers.push(worker);
  await worker.ready();
  return worker;
}

describe('task logs across processes', () => {
  it(
    'keeps the lines a worker flushed before it was killed with kill -9, and the next try logs beside them',
    { timeout: 90_000 * TIMING },
    async () => {
      const zkPlan = await env.zkPlan();
      const parent = env.root();
      const plan = await zkPlan.createPlan(parent, { initialDelayMs: 0 });
      const task = await zkPlan.addTask(plan, call('chatter', { lines: 6, label: 'first' }));
      await zkPlan.markAsReady(plan);
      const first = await startWorker(parent);
      // The marker is logged a second after the six lines: once it is readable, everything before it was flushed.
      await waitFor(
        'the marker in the log',
        async () =>
          (await zkPlan.logs.read(task))
            .flatMap((attempt) => attempt.lines.map(({ msg }) => msg))
            .includes('first marker'),
        { timeoutMs: 20_000 },
      );
      expect(first.output).toMatch(/\[plan-\d+ task-\d+ #1\] first line 2/); // echoed, labelled
      await first.kill9();
      const [killed] = await zkPlan.logs.read(task);
      expect(killed?.lines.map(({ msg }) => msg)).toEqual([
        ...Array.from({ length: 6 }, (_, i) => `first line ${i + 1}`),
        'first marker',
      ]);
      expect(killed?.lines[0]?.fields).toEqual({ i: 1 });
      expect(killed?.finishedAt).toBeUndefined(); // it never ended: the process died
      expect(killed?.fullLog?.location).toContain(join('logs', encodeURIComponent(parent)));

      // Another worker takes the task once the dead one's session expires; its try is a second record of attempt 1 (a kill is not charged).
      await startWorker(parent);
      await waitFor('a second try', async () => (await zkPlan.logs.read(task)).length === 2, {
        timeoutMs: 30_000,
      });
      const tries = await zkPlan.logs.read(task);
      expect(tries.map(({ attempt }) => attempt)).toEqual([1, 1]);
      expect(new Set(tries.map(({ workerId }) => workerId)).size).toBe(2);
      await zkPlan.control.cancel(plan);
    },
  );

  it(
    'zk-plan logs prints a task log, follows a running task to its end, and reads --json',
    { timeout: 90_000 * TIMING },
    async () => {
      const zkPlan = await env.zkPlan();
      const parent = env.root();
      const plan = await zkPlan.createPlan(parent);
      const task = await zkPlan.addTask(plan, call('ticker', { lines: 6, everyMs: 300 }));
      await zkPlan.markAsReady(plan);
      const worker = await startWorker(parent, ['--task-log-port', '0']);
      expect(worker.output).toMatch(/task logs at http:\/\/127\.0\.0\.1:\d+\/logs\//);
      await waitFor('a first log record', async () => (await zkPlan.logs.read(task)).length === 1, {
        timeoutMs: 20_000,
      });

      const follower = spawn(
        process.execPath,
        ['--import', 'tsx', 'src/cli/main.ts', 'logs', task, '--follow'],
        { env: cliEnv(env.connectString) },
      );
      let followed = '';
      follower.stdout.on('data', (chunk: Buffer) => (followed += String(chunk)));
      follower.stderr.on('data', (chunk: Buffer) => (followed += String(chunk)));
      const exitCode = await new Promise<number | null>((resolve) =>
        follower.once('close', resolve),
      );
      expect(exitCode, followed).toBe(0); // it ended on its own when the task completed
      expect(followed.match(/#1 \S+ INFO  tick \d/g)).toHaveLength(6);
      expect(await zkPlan.planCompleted(plan)).toBe(true);

      const printed = await runCli(env.connectString, ['logs', task]);
      expect(printed.code, printed.stderr).toBe(0);
      expect(printed.stdout).toMatch(/── attempt 1 on \S+, started \S+, ended \S+/);
      expect(printed.stdout).toContain('INFO  tick 6');
      const json = await runCli(env.connectString, ['logs', task, '--json', '--attempt', '1']);
      expect(JSON.parse(json.stdout)).toMatchObject([
        {
          attempt: 1,
          truncated: false,
          lines: expect.arrayContaining([expect.objectContaining({ msg: 'tick 1' })]),
        },
      ]);
      // The whole log, served by the worker that wrote it (--task-log-port), at the URL its record names.
      const [record] = await zkPlan.logs.read(task);
      const url = record?.fullLog?.url ?? '';
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/logs\/.+\.jsonl$/);
      expect((await (await fetch(url)).text()).trim().split('\n')).toHaveLength(6);
      const full = await runCli(env.connectString, ['logs', task, '--full']);
      expect(full.code, full.stderr).toBe(0);
      expect(full.stdout).toContain('INFO  tick 6');

      const wrong = await runCli(env.connectString, ['logs', task, '--attempt', 'zero']);
      expect(wrong.code).toBe(2);
      const noKey = await runCli(env.connectString, ['logs', plan, 'no-such-key']);
      expect(noKey.code).toBe(5);
      expect(noKey.stderr).toContain('zk-plan show');
    },
  );
});
