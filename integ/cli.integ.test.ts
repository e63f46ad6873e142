import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  FunctionRegistry,
  call,
  type PlanStatus,
  type PlanSummary,
  type PlanView,
  type ZkPlan,
} from '../src/index.js';
import { useZooKeeper } from './support/zk-test-env.js';

const env = useZooKeeper('cli');
const children: ChildProcessWithoutNullStreams[] = [];
const CLI = ['--import', 'tsx', 'src/cli/main.ts'];

function cli(
  args: string[],
  extraEnv: Record<string, string> = {},
): ChildProcessWithoutNullStreams {
  const child = spawn(process.execPath, [...CLI, ...args], {
    env: { ...process.env, ...extraEnv },
  });
  children.push(child);
  return child;
}

/** Resolves with what `stream` printed once it matches `pattern` (listening only: the stream stays open). */
function output(
  child: ChildProcessWithoutNullStreams,
  stream: 'stdout' | 'stderr',
  pattern: RegExp,
): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    const onData = (chunk: Buffer): void => {
      text += String(chunk);
      if (!pattern.test(text)) return;
      child[stream].off('data', onData);
      resolve(text);
    };
    child[stream].on('data', onData);
    child[stream].once('end', () =>
      reject(new Error(`${stream} ended without ${pattern}: ${text}`)),
    );
  });
}

afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
});

interface Run {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly ms: number;
}

/** Starts the CLI against this file's server; `result` resolves once it exited. */
function start(
  args: string[],
  extraEnv: Record<string, string> = {},
): { child: ChildProcessWithoutNullStreams; result: Promise<Run> } {
  const startedAt = performance.now();
  const child = cli(args, { ZOOKEEPER_CONNECT: env.connectString, ...extraEnv });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += String(chunk)));
  child.stderr.on('data', (chunk: Buffer) => (stderr += String(chunk)));
  const result = (once(child, 'close') as Promise<[number | null]>).then(([code]) => ({
    code,
    stdout,
    stderr,
    ms: performance.now() - startedAt,
  }));
  return { child, result };
}

/** Runs the CLI against this file's server to the end. */
function run(args: string[], extraEnv: Record<string, string> = {}): Promise<Run> {
  return start(args, extraEnv).result;
}

/** Idle worker loops look again soon: a plan added after the pool started is taken at once. */
const QUICK = { backoff: { initial: 10, max: 50 } } as const;

/** Task functions of the worker pools the tests run in this process. */
const functions = new FunctionRegistry()
  .register('constant', (ctx) => ctx.params[0])
  .register('sum', (_ctx, ...xs: number[]) => xs.reduce((a, b) => a + b, 0))
  .register('nap', async (ctx, ...xs: number[]) => {
    await new Promise((resolve) => setTimeout(resolve, Number(ctx.params[0])));
    return xs.length;
  })
  .register('boom', () => {
    throw new Error('the disk is full');
  });

/** A ZkPlan whose pool (started with `startWorkers`) runs `functions`. */
function workerPlan(): Promise<ZkPlan> {
  return env.zkPlan({ functions });
}

/** A plan of one task that always throws, tried once, run to its failure by a pool of this process. */
async function failedPlan(zkPlan: ZkPlan, parent: string): Promise<{ plan: string; task: string }> {
  const plan = await zkPlan.createPlan(parent, { maxAttempts: 1 });
  const task = await zkPlan.addTask(plan, call('boom'));
  await zkPlan.markAsReady(plan);
  return { plan, task };
}

describe('the zk-plan command line', () => {
  it('worker runs the functions of a module on plans under a parent, and stops cleanly on SIGTERM', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'zk-plan-cli-'));
    const tasks = join(dir, 'tasks.mjs');
    await writeFile(
      tasks,
      'export default { double: (_ctx, x) => x * 2, constant: (ctx) => ctx.params[0] };\n',
    );
    const parent = env.root();
    const worker = cli(['worker', '--parent', parent, '--functions', tasks, '--workers', '2'], {
      ZOOKEEPER_CONNECT: env.connectString,
    });
    const started = await output(worker, 'stdout', /2 loop\(s\)/);
    expect(started).toContain('functions: constant, double');
    const zkPlan = await env.zkPlan();
    const plan = await zkPlan.createPlan(parent);
    const input = await zkPlan.addTask(plan, call('constant', 21));
    const doubled = await zkPlan.addTask(plan, call('double'), [input], { keepResult: true });
    await zkPlan.markAsReady(plan);
    await zkPlan.waitForCompletion(plan, { timeoutMs: 20_000 });
    expect(await zkPlan.getResult(doubled)).toBe(42);
    worker.kill('SIGTERM');
    const [code] = (await once(worker, 'exit')) as [number | null];
    expect(code).toBe(0);
    await rm(dir, { recursive: true, force: true });
  });

  it('says what is missing, with exit code 2, on a bad command line', async () => {
    const child = cli(['worker', '--functions', 'x.mjs'], { ZOOKEEPER_CONNECT: '' });
    const [text, [code]] = await Promise.all([
      output(child, 'stderr', /Usage/),
      once(child, 'exit') as Promise<[number | null]>,
    ]);
    expect(code).toBe(2);
    expect(text).toContain('--connect (or ZOOKEEPER_CONNECT) is required');
  });

  it('dev-server prints a loopback connect string and stops its server on SIGINT', async () => {
    const child = cli(['dev-server']);
    const connect = (await output(child, 'stdout', /\n/)).trim();
    expect(connect).toMatch(/^127\.0\.0\.1:\d+$/);
    const zkPlan = await env.zkPlan({ connect });
    expect(await zkPlan.createPlan('/dev')).toBe('/dev/plan-0000000000');
    await zkPlan.close();
    child.kill('SIGINT');
    const [code] = (await once(child, 'exit')) as [number | null];
    expect(code).toBe(0);
  });
});

describe('zk-plan plans, show, wait, rm, retry', () => {
  it('plans lists the plans of a parent and show the tasks of one, as tables and as JSON', async () => {
    const zkPlan = await workerPlan();
    const parent = env.root();
    const done = await zkPlan.createPlan(parent, { history: true });
    const [one, two] = (await zkPlan.addTasks(done, [
      { task: call('constant', 1) },
      { task: call('constant', 2) },
      { task: call('sum'), args: [0, 1] },
    ])) as [string, string, string];
    await zkPlan.markAsReady(done);
    const failing = await zkPlan.createPlan(parent, { maxAttempts: 1 });
    const [boom, blocked, waiting] = (await zkPlan.addTasks(failing, [
      { task: call('boom') },
      { task: call('sum'), args: [0] },
      { task: call('sum', 'x'), args: [0, 1] },
    ])) as [string, string, string];
    await zkPlan.markAsReady(failing);
    zkPlan.startWorkers(parent, { count: 2, ...QUICK });
    await zkPlan.waitForCompletion(done, { timeoutMs: 10_000 });
    await expect(zkPlan.waitForCompletion(failing, { timeoutMs: 10_000 })).rejects.toThrow(
      /failed/,
    );

    const [plans, plansJson, show, showJson, showDone, timeline, byWorker, misused] =
      await Promise.all([
        run(['plans', parent]),
        run(['plans', parent, '--json']),
        run(['show', failing]),
        run(['show', failing, '--json']),
        run(['show', done]),
        run(['show', done, '--timeline']),
        run(['show', failing, '--timeline', '--by-worker']),
        run(['show', done, '--by-worker']),
      ]);
    expect(plans.code).toBe(0);
    const lines = plans.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^PLAN\s+STATE\s+PROGRESS\s+FAILED$/);
    expect(lines[1]).toMatch(new RegExp(`^${done}\\s+completed\\s+3/3\\s+0$`));
    expect(lines[2]).toMatch(new RegExp(`^${failing}\\s+failed\\s+0/3\\s+1$`));
    expect(plansJson.code).toBe(0);
    const summaries = JSON.parse(plansJson.stdout) as PlanSummary[];
    expect(
      summaries.map(({ plan, done: finished, status }) => [
        plan,
        finished,
        status.state,
        status.counts.failed,
      ]),
    ).toEqual([
      [done, 3, 'completed', 0],
      [failing, 0, 'failed', 1],
    ]);

    expect(show.code).toBe(0);
    const short = (path: string): string => `task-${Number(path.slice(path.lastIndexOf('-') + 1))}`;
    expect(show.stdout).toContain(`${failing}: failed, 3 task(s): 0 done, 1 failed, 2 blocked`);
    expect(show.stdout).toMatch(
      /TASK\s+STATE\s+CALL\s+INPUTS\s+ATTEMPTS\s+WORKER\s+STARTED\s+ENDED\s+TOOK\s+DETAIL/,
    );
    // A failed task: who failed it and when, then its error.
    expect(show.stdout).toMatch(
      new RegExp(
        `${short(boom)}\\s+failed\\s+boom\\(\\)\\s+-\\s+1\\s+\\S+/\\d+\\s+-\\s+\\d\\d:\\d\\d:\\d\\d\\s+-\\s+Error: .*the disk is full`,
      ),
    );
    expect(show.stdout).toMatch(
      new RegExp(
        `${short(blocked)}\\s+blocked\\s+sum\\(\\)\\s+${short(boom)}\\s+-\\s+-\\s+-\\s+-\\s+its input comes from failed task ${short(boom)}`,
      ),
    );
    expect(show.stdout).toMatch(
      new RegExp(
        `${short(waiting)}\\s+blocked\\s+sum\\("x"\\)\\s+${short(boom)},${short(blocked)}\\s`,
      ),
    );
    expect(showJson.code).toBe(0);
    const view = JSON.parse(showJson.stdout) as PlanView;
    expect(view.tasks.map(({ task, state }) => [task, state])).toEqual([
      [boom, 'failed'],
      [blocked, 'blocked'],
      [waiting, 'blocked'],
    ]);
    expect(view.tasks[0]?.failure).toMatchObject({
      message: expect.stringContaining('the disk is full'),
      attempts: 1,
    });

    expect(showDone.code).toBe(0);
    expect(showDone.stdout).toContain(`${done}: completed, 3 task(s): 3 done`);
    // Done tasks: the worker that ran each, when it started and ended, how long it took.
    const ran = `\\S+/\\d+\\s+\\d\\d:\\d\\d:\\d\\d\\s+\\d\\d:\\d\\d:\\d\\d\\s+\\d[\\d.]*m?s`;
    expect(showDone.stdout).toMatch(
      new RegExp(`${short(one)}\\s+done\\s+constant\\(1\\)\\s+-\\s+${ran}`),
    );
    expect(showDone.stdout).toMatch(
      new RegExp(`sum\\(\\)\\s+${short(one)},${short(two)}\\s+${ran}`),
    );

    // The timeline: a line per task with its bar, the sum on the critical path after an input.
    expect(timeline.code).toBe(0);
    expect(timeline.stdout).toContain(`${done}: timeline of 3 task(s), 3 tries`);
    for (const task of [one, two])
      expect(timeline.stdout).toMatch(new RegExp(`${short(task)}\\s+\\|[ #]*#[ #]*\\|`));
    expect(timeline.stdout).toMatch(/^\* task-\d+\s+\|[ #]*#[ #]*\|/m);
    expect(timeline.stdout).toMatch(/critical path \(\d[\d.]*m?s\): task-\d+ → task-\d+/);
    // Per worker: the failed plan's one try, its worker's line drawn failed.
    expect(byWorker.code).toBe(0);
    expect(byWorker.stdout).toMatch(/\S+\/\d+\s+\|\s*x+\s*\|/);
    expect(misused.code).toBe(2);
    expect(misused.stderr).toContain(`zk-plan show ${done} --timeline --by-worker`);
  });

  it('wait follows a plan to completion: exit 0, progress lines (at most one a second), the final status with --json', async () => {
    const zkPlan = await workerPlan();
    const parent = env.root();
    const plan = await zkPlan.createPlan(parent);
    let previous: string[] = [];
    for (let index = 0; index < 6; index++)
      previous = [await zkPlan.addTask(plan, call('nap', 250), previous)];
    await zkPlan.markAsReady(plan);
    const human = start(['wait', plan, '--timeout-ms', '20000']);
    const json = start(['wait', plan, '--json']);
    await Promise.all([
      output(human.child, 'stderr', /0\/6 done/),
      output(json.child, 'stderr', /0\/6 done/),
    ]); // both have read the plan
    zkPlan.startWorkers(parent, { count: 2, ...QUICK });
    const [waited, waitedJson] = await Promise.all([human.result, json.result]);
    expect(waited.code).toBe(0);
    expect(waited.stdout).toMatch(new RegExp(`^${plan} completed: 6 task\\(s\\) done, waited \\d`));
    const progress = waited.stderr.trim().split('\n');
    expect(progress[0]).toMatch(/^plan-\d+: 0\/6 done \(0%\)/);
    expect(progress.at(-1)).toMatch(
      /^plan-\d+: 6\/6 done \(100%\), [\d.]+ tasks\/s, ETA 0s, 0 failed$/,
    );
    expect(progress.length).toBeLessThanOrEqual(Math.ceil(waited.ms / 1000) + 1);
    expect(waitedJson.code).toBe(0);
    expect(JSON.parse(waitedJson.stdout)).toMatchObject({
      plan,
      state: 'completed',
      counts: { total: 6, done: 6 },
    });
  });

  it('wait exits 1 when the plan fails, with its failed tasks and their errors; 3 on timeout', async () => {
    const zkPlan = await workerPlan();
    const parent = env.root();
    const { plan, task } = await failedPlan(zkPlan, parent);
    const stuck = await zkPlan.createPlan(`${parent}-idle`);
    await zkPlan.addTask(stuck, call('constant', 1));
    await zkPlan.markAsReady(stuck);
    zkPlan.startWorkers(parent, { count: 1, ...QUICK });
    const [failed, failedJson, timedOut, timedOutJson] = await Promise.all([
      run(['wait', plan]),
      run(['wait', plan, '--json']),
      run(['wait', stuck, '--timeout-ms', '1000']),
      run(['wait', stuck, '--timeout-ms', '1000', '--json']),
    ]);
    expect(failed.code).toBe(1);
    expect(failed.stdout).toContain(
      `${plan} failed: 1 task(s) failed for good, 0 blocked behind them`,
    );
    expect(failed.stdout).toMatch(/task-\d+\s+1\s+Error: Task task-\d+ failed: the disk is full/);
    expect(failed.stdout).toContain(`zk-plan retry ${plan}`);
    expect(failedJson.code).toBe(1);
    const status = JSON.parse(failedJson.stdout) as PlanStatus;
    expect(status).toMatchObject({ plan, state: 'failed', counts: { failed: 1 } });
    expect(status.failed).toEqual([
      {
        task,
        failure: expect.objectContaining({
          message: expect.stringContaining('the disk is full'),
          attempts: 1,
        }),
      },
    ]);
    expect(timedOut.code).toBe(3);
    expect(timedOut.stderr).toContain(
      `zk-plan: timed out after 1.0s: ${stuck} still has 1 task(s) (0 running, 1 runnable, 0 waiting)`,
    );
    expect(timedOutJson.code).toBe(3);
    expect(JSON.parse(timedOutJson.stdout)).toMatchObject({
      plan: stuck,
      state: 'running',
      counts: { total: 1, runnable: 1 },
    });
  });

  it('wait shows a progress bar with done/total in a terminal', async () => {
    const zkPlan = await workerPlan();
    const parent = env.root();
    const plan = await zkPlan.createPlan(parent, { history: true });
    await zkPlan.addTasks(
      plan,
      Array.from({ length: 10 }, () => ({ task: call('nap', 150) })),
    );
    await zkPlan.markAsReady(plan);
    const command = `${process.execPath} ${CLI.join(' ')} wait ${plan} --connect ${env.connectString}`;
    const child = spawn('script', ['-qefc', command, '/dev/null'], {
      env: { ...process.env, COLUMNS: '120', LINES: '40' },
    });
    children.push(child as ChildProcessWithoutNullStreams);
    let text = '';
    child.stdout.on('data', (chunk: Buffer) => (text += String(chunk)));
    await output(child as ChildProcessWithoutNullStreams, 'stdout', /0\/10 done/);
    zkPlan.startWorkers(parent, { count: 2, ...QUICK });
    const [code] = (await once(child, 'close')) as [number | null];
    expect(code).toBe(0);
    const frames = text.split(/\r|\n|\u001b\[1G/).filter((frame) => /\d+\/10/.test(frame));
    expect(frames[0]).toMatch(
      /plan-\d+ [█░]{24} 0\/10 done \(0%\) \| [\d.]+ tasks\/s \| ETA \S+ \| 0 failed/,
    );
    expect(frames.some((frame) => /[█░]{24} [1-9]\/10 done /.test(frame))).toBe(true); // an intermediate state
    expect(frames.at(-1)).toMatch(
      /█{24} 10\/10 done \(100%\) \| [\d.]+ tasks\/s \| ETA 0s \| 0 failed/,
    );
    expect(text).toContain(`${plan} completed: 10 task(s) done`);
  });

  it('retry resets failed tasks, rm removes plans, a missing plan is exit 5', async () => {
    const zkPlan = await workerPlan();
    const parent = env.root();
    const pool = zkPlan.startWorkers(parent, { count: 1, ...QUICK });
    const [first, second] = await Promise.all([
      failedPlan(zkPlan, parent),
      failedPlan(zkPlan, parent),
    ]);
    for (const { plan } of [first, second])
      await expect(zkPlan.waitForCompletion(plan, { timeoutMs: 10_000 })).rejects.toThrow(/failed/);
    await pool.stop();
    const missing = `${parent}/plan-0000009999`;
    const [retried, retriedJson, missingShow, missingJson, missingWait] = await Promise.all([
      run(['retry', first.plan]),
      run(['retry', second.plan, '--json']),
      run(['show', missing]),
      run(['rm', missing, '--json']),
      run(['wait', missing]),
    ]);
    expect(retried.code).toBe(0);
    expect(retried.stdout).toBe(
      `${first.plan}: 1 failed task(s) reset; they, then their dependents, run again:\n  ${first.task}\n`,
    );
    expect(retriedJson.code).toBe(0);
    expect(JSON.parse(retriedJson.stdout)).toEqual({ plan: second.plan, reset: [second.task] });
    expect((await zkPlan.plans.status(first.plan)).counts).toMatchObject({
      failed: 0,
      runnable: 1,
    });
    expect(missingShow.code).toBe(5);
    expect(missingShow.stderr).toBe(
      `zk-plan: no plan at ${missing} (zk-plan plans <parent> lists the plans of a parent)\n`,
    );
    expect(missingJson.code).toBe(5);
    expect(JSON.parse(missingJson.stdout)).toMatchObject({
      error: { code: 'PLAN_NOT_FOUND', exitCode: 5, path: missing },
    });
    expect(missingWait.code).toBe(5);

    const [removed, removedJson] = await Promise.all([
      run(['rm', first.plan]),
      run(['rm', second.plan, '--json']),
    ]);
    expect(removed.code).toBe(0);
    expect(removed.stdout).toBe(`removed ${first.plan}\n`);
    expect(removedJson.code).toBe(0);
    expect(JSON.parse(removedJson.stdout)).toEqual({ plan: second.plan, removed: true });
    expect(await zkPlan.zk.exists(first.plan)).toBeUndefined();
    expect(await zkPlan.zk.exists(second.plan)).toBeUndefined();
  });

  it('exit 2 for a bad path or option, 4 when no server answers within --connect-timeout-ms', async () => {
    const [badPath, notAPlan, badNumber, unreachable] = await Promise.all([
      run(['show', 'plans/plan-0000000001']),
      run(['wait', '/plans', '--json']),
      run(['wait', '/plans/plan-0000000001', '--timeout-ms', 'soon']),
      run(['plans', '/plans', '--connect', '127.0.0.1:1', '--connect-timeout-ms', '1500']),
    ]);
    expect(badPath.code).toBe(2);
    expect(badPath.stderr).toBe(
      'zk-plan: Invalid plan: "plans/plan-0000000001" must start with "/"\n',
    );
    expect(notAPlan.code).toBe(2);
    expect(JSON.parse(notAPlan.stdout)).toMatchObject({
      error: { code: 'INVALID_ARGUMENT', exitCode: 2 },
    });
    expect(badNumber.code).toBe(2);
    expect(badNumber.stderr).toContain("argument 'soon' is invalid");
    expect(badNumber.stderr).toContain('Usage: zk-plan wait [options] <plan>');
    expect(unreachable.code).toBe(4);
    expect(unreachable.stderr).toContain(
      'zk-plan: cannot reach ZooKeeper at 127.0.0.1:1 within 1500 ms',
    );
    // The message names the timeout the command applied; the time only proves it gives up rather
    // than hangs (four commands start under tsx at once here: on a loaded 2-core machine one took 7.6 s).
    expect(unreachable.ms).toBeLessThan(1500 + 20_000);
  });
});

describe('zk-plan worker with --json and --metrics-port, and ui', () => {
  it('worker prints a JSON start-up document, serves metrics, logs JSON lines, and exits 0 on SIGINT', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'zk-plan-cli-'));
    const tasks = join(dir, 'tasks.mjs');
    await writeFile(tasks, "export default { boom: () => { throw new Error('no luck'); } };\n");
    const parent = env.root();
    const worker = cli(
      ['worker', '--parent', parent, '--functions', tasks, '--metrics-port', '0', '--json'],
      { ZOOKEEPER_CONNECT: env.connectString },
    );
    const started = JSON.parse(await output(worker, 'stdout', /\n/)) as {
      event: string;
      loops: number;
      metrics: string;
      functions: string[];
    };
    expect(started).toMatchObject({
      event: 'started',
      loops: 1,
      parent,
      parentCreated: true,
      functions: ['boom'],
      metrics: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/),
    });
    // The parent did not exist: a typo in --parent would leave the worker waiting where nobody writes plans.
    const warning = JSON.parse(
      (await output(worker, 'stderr', /did not exist.*\n/))
        .split('\n')
        .find((line) => line.includes('did not exist')) ?? '{}',
    ) as Record<string, unknown>;
    expect(warning).toMatchObject({
      level: 40,
      msg: expect.stringContaining(`${parent} did not exist: created it, and waiting for plans`),
    });
    const zkPlan = await env.zkPlan();
    const plan = await zkPlan.createPlan(parent, { maxAttempts: 1 });
    const task = await zkPlan.addTask(plan, call('boom'));
    await zkPlan.markAsReady(plan);
    const logLine = JSON.parse(
      (await output(worker, 'stderr', /"task:failed".*\n/))
        .split('\n')
        .find((line) => line.includes('"task:failed"')) ?? '{}',
    ) as Record<string, unknown>;
    expect(logLine).toMatchObject({ event: 'task:failed', task, final: true, level: 50 });
    const metrics = await (await fetch(started.metrics)).text();
    expect(metrics).toMatch(/^zk_plan_/m);
    worker.kill('SIGINT');
    const [code] = (await once(worker, 'exit')) as [number | null];
    expect(code).toBe(0);
    await rm(dir, { recursive: true, force: true });
  });

  it('ui serves the web view of a parent and stops on SIGTERM', async () => {
    const parent = env.root();
    const zkPlan = await env.zkPlan();
    await zkPlan.createPlan(parent);
    const ui = cli(['ui', parent, '--port', '0'], { ZOOKEEPER_CONNECT: env.connectString });
    const url = (await output(ui, 'stdout', /\n/)).trim();
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    const response = await fetch(url);
    expect(response.status).toBe(200);
    expect(await response.text()).toContain('<html');
    ui.kill('SIGTERM');
    const [code] = (await once(ui, 'exit')) as [number | null];
    expect(code).toBe(0);
  });

  it('the built CLI (dist/, made by npm ci or npm run build) serves the web view’s bundled assets', async () => {
    const built = await readFile('dist/ui/assets/plan.js', 'utf8').catch(() => {
      throw new Error(
        'dist/ui/assets/plan.js is missing: npm ci (its prepare step) or npm run build makes it',
      );
    });
    const parent = env.root();
    const plan = await (await env.zkPlan()).createPlan(parent);
    const ui = spawn(process.execPath, ['dist/cli/main.js', 'ui', parent, '--port', '0'], {
      env: { ...process.env, ZOOKEEPER_CONNECT: env.connectString },
    });
    children.push(ui);
    const url = (await output(ui, 'stdout', /\n/)).trim();
    const page = await (await fetch(`${url}plan?path=${encodeURIComponent(plan)}`)).text();
    expect(page).toContain('<script src="/plan.js"></script>');
    const script = await fetch(`${url}plan.js`);
    expect(script.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(await script.text()).toBe(built);
    for (const asset of ['plans.js', 'layout-worker.js', 'ui.css'])
      expect(await (await fetch(`${url}${asset}`)).text()).toBe(
        await readFile(`dist/ui/assets/${asset}`, 'utf8'),
      );
    ui.kill('SIGTERM');
    expect(((await once(ui, 'exit')) as [number | null])[0]).toBe(0);
  });
});
