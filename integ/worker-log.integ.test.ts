import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { call, type ZkPlan } from '../src/index.js';
import { decodeValue, encodeValue } from '../src/serialization/codec.js';
import { cliEnv } from './support/run-cli.js';
import { useZooKeeper, waitFor } from './support/zk-test-env.js';

const env = useZooKeeper('worker-log');
const children: ChildProcessWithoutNullStreams[] = [];
let dir: string | undefined;

afterEach(async () => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  dir = undefined;
});

/** Task functions: `flaky` fails its first try, `broken` always, `slow` runs until its signal is aborted. */
const TASKS = `
let flakyTries = 0;
export default {
  flaky: () => { flakyTries += 1; if (flakyTries === 1) throw new Error('the disk is busy'); return flakyTries; },
  broken: () => { throw new Error('the disk is full'); },
  slow: (ctx) => new Promise((resolve, reject) => ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason))),
};
`;

/** `zk-plan worker` on `parent` with `args`; `stderr()` is what it logged so far. */
async function startWorker(
  parent: string,
  args: readonly string[],
): Promise<{ child: ChildProcessWithoutNullStreams; stderr: () => string }> {
  dir = await mkdtemp(join(tmpdir(), 'zk-plan-worker-log-'));
  const tasks = join(dir, 'tasks.mjs');
  await writeFile(tasks, TASKS);
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      'src/cli/main.ts',
      'worker',
      '--parent',
      parent,
      '--functions',
      tasks,
      ...args,
    ],
    {
      env: cliEnv(env.connectString),
    },
  );
  children.push(child);
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += String(chunk)));
  let stdout = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += String(chunk)));
  await waitFor('the worker to say it runs', () => stdout.includes('\n'), { timeoutMs: 30_000 });
  return { child, stderr: () => stderr };
}

/** Adds `fields` to a node's value, as the writers of plan names and task keys store them. */
async function addToValue(
  zkPlan: ZkPlan,
  path: string,
  fields: Record<string, unknown>,
): Promise<void> {
  const { data } = await zkPlan.zk.getData(path);
  await zkPlan.zk.setData(
    path,
    encodeValue(
      { ...(decodeValue(path, data) as Record<string, unknown>), ...fields },
      'test value',
      path,
    ),
  );
}

/** A plan named `nightly` under `parent` whose tasks (by key) call the given functions; tried twice. */
async function namedPlan(
  zkPlan: ZkPlan,
  parent: string,
  tasks: Readonly<Record<string, string>>,
): Promise<{ plan: string; paths: Record<string, string> }> {
  const plan = await zkPlan.createPlan(parent, { maxAttempts: 2, initialDelayMs: 100 });
  await addToValue(zkPlan, plan, { name: 'nightly' });
  const paths: Record<string, string> = {};
  for (const [key, fn] of Object.entries(tasks)) {
    paths[key] = await zkPlan.addTask(plan, call(fn));
    await addToValue(zkPlan, paths[key], { key });
  }
  await zkPlan.markAsReady(plan);
  return { plan, paths };
}

async function stop(child: ChildProcessWithoutNullStreams): Promise<number | null> {
  child.kill('SIGTERM');
  const [code] = (await once(child, 'exit')) as [number | null];
  return code;
}

describe('zk-plan worker logs', () => {
  it('--json: every task line carries plan, planName, task, key, fn, attempt, maxAttempts and workerId; a started event; a drain release says so', async () => {
    const parent = env.root();
    const zkPlan = await env.zkPlan();
    const { child, stderr } = await startWorker(parent, [
      '--json',
      '--workers',
      '2',
      '--drain-timeout-ms',
      '200',
    ]);
    const { plan, paths } = await namedPlan(zkPlan, parent, { eu: 'flaky', us: 'slow' });
    const lines = (): Record<string, unknown>[] =>
      stderr()
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as Record<string, unknown>);
    await waitFor('eu completed and us started', () => {
      const events = lines().map((line) => `${String(line['event'])} ${String(line['key'])}`);
      return events.includes('task:completed eu') && events.includes('task:started us');
    });
    expect(await stop(child)).toBe(0);

    const taskLines = lines().filter((line) => String(line['event']).startsWith('task:'));
    expect(taskLines.map((line) => [line['event'], line['key'], line['attempt']])).toEqual(
      expect.arrayContaining([
        ['task:started', 'eu', 1],
        ['task:failed', 'eu', 1],
        ['task:started', 'eu', 2],
        ['task:completed', 'eu', 2],
        ['task:started', 'us', 1],
        ['task:failed', 'us', 1],
      ]),
    );
    for (const line of taskLines) {
      const fn = line['key'] === 'eu' ? 'flaky' : 'slow';
      expect(line).toMatchObject({
        plan,
        planName: 'nightly',
        task: paths[String(line['key'])],
        fn,
        maxAttempts: 2,
        workerId: expect.any(String),
      });
      if (line['event'] !== 'task:started') expect(line['durationMs']).toEqual(expect.any(Number));
    }
    const retried = taskLines.find(
      (line) => line['event'] === 'task:failed' && line['key'] === 'eu',
    );
    expect(retried).toMatchObject({
      level: 40,
      charged: true,
      final: false,
      nextTryAt: expect.any(String),
      error: { message: 'the disk is busy' },
    });
    expect(retried?.['msg']).toMatch(
      /^task failed: .* \(key eu, fn flaky, plan nightly\), attempt 1\/2, retrying at /,
    );
    expect(retried?.['error']).not.toHaveProperty('stack'); // a failure to be retried has no stack above debug level
    const released = taskLines.find(
      (line) => line['event'] === 'task:failed' && line['key'] === 'us',
    );
    expect(released).toMatchObject({ level: 40, charged: false, final: false, givenBack: 'drain' });
    expect(released?.['msg']).toMatch(/^task released on drain: /);
  });

  it('plain: one line per event, and below a task failed for good the frames of the task code only, none of zk-plan', async () => {
    const parent = env.root();
    const zkPlan = await env.zkPlan();
    const { child, stderr } = await startWorker(parent, ['--log-format', 'plain']);
    const { paths } = await namedPlan(zkPlan, parent, { audit: 'broken' });
    await waitFor('audit to fail for good', () => stderr().includes('task failed for good'));
    expect(await stop(child)).toBe(0);

    const lines = stderr().split('\n');
    const named = `${paths['audit']} (key audit, fn broken, plan nightly)`;
    const entries = lines.filter((line) => line.startsWith('zk-plan worker: task '));
    expect(entries).toEqual([
      `zk-plan worker: task started: ${named}, attempt 1/2`,
      expect.stringMatching(
        new RegExp(
          `^zk-plan worker: task failed: ${escape(named)}, attempt 1/2, retrying at \\d\\d:\\d\\d:\\d\\d \\(in \\d+ ms\\): the disk is full$`,
        ),
      ),
      `zk-plan worker: task started: ${named}, attempt 2/2`,
      `zk-plan worker: task failed for good: ${named}, attempt 2/2: the disk is full`,
    ]);
    const stack = lines
      .slice(lines.indexOf(entries[3] ?? '') + 1)
      .filter((line) => line.startsWith('    at '));
    expect(stack).toEqual([
      expect.stringMatching(/^ {4}at broken \(file:\/\/.*tasks\.mjs:\d+:\d+\)$/),
    ]);
  });
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
