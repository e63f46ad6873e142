/**
 * The history records a cancel leaves when worker processes fail around it, on a real server with 3
 * real `zk-plan worker` processes (1 loop each): a worker killed with SIGKILL while its task runs,
 * right before the cancel; a worker frozen with SIGSTOP until its session expired, then woken after
 * the cancel; and a cancel whose process dies right after its control record, called again by
 * another process after a worker was killed. In each, every task of the plan ends with exactly one
 * record, written once (never rewritten), and each says where its task stood:
 *
 * - a task held by a killed worker whose session still lives is recorded as cancelled while running,
 *   on that worker: its owner node stays until the session ends, so the cancel finds the task held
 *   (docs/design/plan-control.md › A crash part-way);
 * - a task whose worker's session had expired before the cancel read the plan is recorded as it then
 *   stood: runnable, no worker (its owner node went with the session, and every live loop was busy);
 * - a task running on a live worker is recorded as cancelled while running, on that worker, even
 *   when the worker gave it back before the cancel read the plan: the worker writes that record
 *   itself first (src/worker/record-cancelled-run.ts). The cancels here are held right after their
 *   touch of the plan node until the live workers have let their tasks go, so that record can only
 *   come from the workers (without it, the cancel would find those tasks free and record them as
 *   runnable).
 *
 * Which process ran what comes from the functions' own execution log (integ/support/fault-functions.ts).
 */
import { describe, expect, it } from 'vitest';
import { FunctionRegistry, ZkPlan, call, type TaskView } from '../../src/index.js';
import type { ZkClient } from '../../src/testing/index.js';
import { crashBeforeWrite } from '../support/crash-before-write.js';
import type { LogEntry } from '../support/execution-log.js';
import { useFaultEnv, type FaultEnv } from '../support/fault-env.js';
import { printFigures } from '../support/fault-plan.js';
import type { WorkerProcess } from '../support/worker-process.js';
import { TIMING, waitFor } from '../support/zk-test-env.js';

const TICK_MS = 500;
/** Long enough that a killed worker's session outlives the cancel by seconds (the server ends it some time within this of its last ping). */
const SESSION_TIMEOUT_MS = 8_000;
/** The frozen worker's own session, short so that it expires within the test. */
const SHORT_SESSION_TIMEOUT_MS = 2_000;
/** The tasks run until their plan is cancelled. */
const LONG_MS = 60_000;

const faults = useFaultEnv();

/** A server, the test's client, and 3 worker processes of 1 loop each (the first with `firstSessionTimeoutMs`). */
async function startCancelEnv(
  name: string,
  firstSessionTimeoutMs = SESSION_TIMEOUT_MS,
): Promise<{ env: FaultEnv; workers: WorkerProcess[] }> {
  const env = await faults.start({
    name,
    tickTimeMs: TICK_MS,
    // The test's own ZkPlan writes plans only; its registry names the function the workers have.
    client: { functions: stepFunctions() },
    workers: {
      loops: 1,
      sessionTimeoutMs: SESSION_TIMEOUT_MS,
      drainTimeoutMs: 200,
      // No retention: it would delete the cancelled plan, records and all, before the test reads them.
      extraArgs: ['--no-retention', '--json'],
    },
  });
  const first = env.fleet.spawn('w1', { sessionTimeoutMs: firstSessionTimeoutMs });
  const others = [env.fleet.spawn('w2'), env.fleet.spawn('w3')];
  const workers = [first, ...others];
  await Promise.all(workers.map((worker) => worker.ready()));
  return { env, workers };
}

function stepFunctions(): FunctionRegistry {
  return new FunctionRegistry().register('step', () => null);
}

/** A plan of 4 long independent tasks and one that waits for the first of them, and who started what. */
interface RunningPlan {
  readonly plan: string;
  /** Every task of the plan, in the order added. */
  readonly tasks: readonly string[];
  readonly dependent: string;
  /** The first start of each task that started, by task: one per worker process. */
  readonly starts: ReadonlyMap<string, LogEntry>;
  /** The long task no worker took: every loop is busy with another. */
  readonly idle: string;
}

/** Adds the plan and waits until each of the 3 worker processes runs one of its long tasks. */
async function startRunningPlan(env: FaultEnv): Promise<RunningPlan> {
  const { zkPlan } = env;
  const plan = await zkPlan.createPlan(env.parent);
  const long = await zkPlan.addTasks(
    plan,
    [0, 1, 2, 3].map((index) => ({ task: call('step', `long${index}`, LONG_MS) })),
  );
  const dependent = await zkPlan.addTask(plan, call('step', 'dependent', 10), [long[0]!]);
  await zkPlan.markAsReady(plan);
  const starts = await waitFor(
    'a task of the plan to start on each of the 3 worker processes',
    () => {
      const firstStarts = new Map<string, LogEntry>();
      for (const entry of env.log())
        if (
          entry.event === 'start' &&
          entry.task.startsWith(`${plan}/`) &&
          !firstStarts.has(entry.task)
        )
          firstStarts.set(entry.task, entry);
      const pids = new Set([...firstStarts.values()].map((entry) => entry.pid));
      return pids.size === 3 ? firstStarts : undefined;
    },
    { timeoutMs: 20_000 },
  );
  const idle = long.find((task) => !starts.has(task));
  if (idle === undefined)
    throw new Error('every long task started: expected one left for want of a loop');
  return { plan, tasks: [...long, dependent], dependent, starts, idle };
}

/**
 * Every scene's start: the server and its 3 workers, the plan running with a task on each worker,
 * the first worker (the one the scene's fault hits) and its task, and the live ones with theirs.
 */
async function startScene(name: string, firstSessionTimeoutMs?: number) {
  const { env, workers } = await startCancelEnv(name, firstSessionTimeoutMs);
  const running = await startRunningPlan(env);
  const [hit, ...live] = workers as [WorkerProcess, ...WorkerProcess[]];
  return {
    env,
    zkPlan: env.zkPlan,
    running,
    hit,
    hitStart: taskOf(running, hit),
    live,
    liveStarts: live.map((worker) => taskOf(running, worker)),
  };
}

/** The task `worker` runs, from the log. */
function taskOf(running: RunningPlan, worker: WorkerProcess): LogEntry {
  const start = [...running.starts.values()].find((entry) => entry.pid === worker.pid);
  if (start === undefined)
    throw new Error(`worker ${worker.name} (pid ${worker.pid}) runs no task of the plan`);
  return start;
}

/**
 * Cancels the plan through a client of its own (a ZkPlan on a new session, as another process
 * would), held right after its
 * touch of the plan node (the write after its control record that tells every worker) until
 * `liveTasks` have no owner node: their workers saw the cancel and let them go. Its reads of the
 * plan, from which it records the tasks that have no record yet, come after.
 */
async function cancelOnceLetGo(
  env: FaultEnv,
  plan: string,
  liveTasks: readonly string[],
): Promise<void> {
  const canceller = await ZkPlan.connect({
    connect: env.connectString,
    functions: stepFunctions(),
    sessionTimeoutMs: 10_000,
  });
  try {
    const setData = canceller.zk.setData.bind(canceller.zk);
    canceller.zk.setData = async (...args: Parameters<ZkClient['setData']>) => {
      const stat = await setData(...args);
      if (args[0] === plan) await untilLetGo(env.zkPlan.zk, liveTasks);
      return stat;
    };
    await canceller.control.cancel(plan);
  } finally {
    await canceller.close();
  }
}

/** Resolves once none of `tasks` has an owner node. */
async function untilLetGo(zk: ZkClient, tasks: readonly string[]): Promise<void> {
  await waitFor(
    'the live workers to let their tasks go',
    async () => {
      const owners = await Promise.all(tasks.map((task) => zk.exists(`${task}/owner`)));
      return owners.every((owner) => owner === undefined);
    },
    { timeoutMs: 10_000 },
  );
}

/**
 * Every task of the plan has exactly one history record, never rewritten (its node at version 0),
 * and describe shows each task once, from it; returns the views by task.
 */
async function expectOneRecordEach(
  zkPlan: ZkPlan,
  running: RunningPlan,
): Promise<Map<string, TaskView>> {
  const records = await zkPlan.zk.tryGetChildren(`${running.plan}/history`);
  const names = running.tasks.map((task) => task.slice(task.lastIndexOf('/') + 1));
  expect(records?.children.sort()).toEqual([...names].sort());
  for (const name of names) {
    const record = await zkPlan.zk.tryGetData(`${running.plan}/history/${name}`);
    expect(record?.stat.version, `the history record of ${name} was written again`).toBe(0);
  }
  const view = await zkPlan.plans.describe(running.plan);
  expect(view.status.state).toBe('cancelled');
  expect(view.tasks.map((task) => task.task).sort()).toEqual([...running.tasks].sort());
  return new Map(view.tasks.map((task) => [task.task, task]));
}

/** A task recorded as cancelled while running, on the worker the log says ran it. */
function runningOn(start: LogEntry): Partial<TaskView> {
  return {
    state: 'cancelled',
    was: 'running',
    workerId: start.workerId,
    startedAt: expect.any(Date) as Date,
  };
}

describe('cancel records when worker processes fail around the cancel', () => {
  it(
    'a worker killed (SIGKILL) while its task runs, right before the cancel: its task is recorded as running on it, the live workers\u2019 as running on theirs, one record each',
    { timeout: 60_000 * TIMING },
    async () => {
      const scene = await startScene('cancel-kill');
      const { env, zkPlan, running, live, liveStarts } = scene;
      const { hit: victim, hitStart: victimStart } = scene;
      // The victim's owner node is there before the kill, and stays until its session ends.
      expect(await zkPlan.zk.exists(`${victimStart.task}/owner`)).toBeDefined();

      const killedAt = await victim.kill9();
      await cancelOnceLetGo(
        env,
        running.plan,
        liveStarts.map((start) => start.task),
      );
      const settledAfterMs = Date.now() - killedAt;
      // What makes "running on the killed worker" the exact outcome: the cancel read the plan before
      // the killed worker's session could end (the server ends it a session timeout after its last ping
      // at the earliest, and the worker pings every third of it).
      expect(settledAfterMs).toBeLessThan((SESSION_TIMEOUT_MS * 2) / 3);

      const views = await expectOneRecordEach(zkPlan, running);
      expect(views.get(victimStart.task)).toMatchObject(runningOn(victimStart));
      for (const start of liveStarts) expect(views.get(start.task)).toMatchObject(runningOn(start));
      expect(views.get(running.idle)).toMatchObject({ state: 'cancelled', was: 'runnable' });
      expect(views.get(running.idle)?.workerId).toBeUndefined();
      expect(views.get(running.dependent)).toMatchObject({ state: 'unstarted', was: 'waiting' });
      // The live workers saw the cancel: their runs were aborted, not ended.
      const aborted = env
        .log()
        .filter((entry) => entry.event === 'aborted' && entry.task.startsWith(`${running.plan}/`));
      expect(aborted.map((entry) => entry.task).sort()).toEqual(
        liveStarts.map((start) => start.task).sort(),
      );
      printFigures('cancel-kill', {
        killToCancelSettledMs: settledAfterMs,
        sessionTimeoutMs: SESSION_TIMEOUT_MS,
        records: running.tasks.length,
      });
    },
  );

  it(
    'a worker frozen (SIGSTOP) until its session expired, then the cancel, then woken (SIGCONT): its task is recorded as runnable, the live workers\u2019 as running on theirs, and the woken worker writes no second record',
    { timeout: 60_000 * TIMING },
    async () => {
      const scene = await startScene('cancel-freeze', SHORT_SESSION_TIMEOUT_MS);
      const { env, zkPlan, running, live, liveStarts } = scene;
      const { hit: frozen, hitStart: frozenStart } = scene;

      const stoppedAt = frozen.suspend();
      // The server expires the frozen worker's session and deletes its owner node; every live loop is
      // busy with its own task, so nobody takes the task again.
      await waitFor(
        'the frozen worker\u2019s session to expire (its owner node gone)',
        async () => (await zkPlan.zk.exists(`${frozenStart.task}/owner`)) === undefined,
        { timeoutMs: SHORT_SESSION_TIMEOUT_MS + 10_000, intervalMs: 100 },
      );
      const expiredAfterMs = Date.now() - stoppedAt;
      await cancelOnceLetGo(
        env,
        running.plan,
        liveStarts.map((start) => start.task),
      );

      const before = await expectOneRecordEach(zkPlan, running);
      expect(before.get(frozenStart.task)).toMatchObject({ state: 'cancelled', was: 'runnable' });
      expect(before.get(frozenStart.task)?.workerId).toBeUndefined();
      for (const start of liveStarts)
        expect(before.get(start.task)).toMatchObject(runningOn(start));
      expect(before.get(running.idle)).toMatchObject({ state: 'cancelled', was: 'runnable' });
      expect(before.get(running.dependent)).toMatchObject({ state: 'unstarted', was: 'waiting' });

      // Woken, the worker finds its session gone: its run is aborted, and it gives the task up
      // without a record of its own (it no longer held it; a write would be refused by the fence).
      frozen.resume();
      await waitFor(
        'the woken worker\u2019s run to see its signal abort',
        () =>
          env
            .log()
            .find(
              (entry) =>
                entry.event === 'aborted' &&
                entry.task === frozenStart.task &&
                entry.pid === frozen.pid,
            ),
        { timeoutMs: 15_000 },
      );
      await waitFor(
        'the woken worker to give its task up',
        () => /task given up, session expired/.test(frozen.output) || undefined,
        { timeoutMs: 10_000 },
      );
      const after = await expectOneRecordEach(zkPlan, running);
      expect(after.get(frozenStart.task)).toEqual(before.get(frozenStart.task));
      expect(frozen.alive).toBe(true);
      printFigures('cancel-freeze', {
        stopToExpiryMs: expiredAfterMs,
        sessionTimeoutMs: SHORT_SESSION_TIMEOUT_MS,
        records: running.tasks.length,
      });
    },
  );

  it(
    'a cancel whose process dies right after its control record, a worker killed (SIGKILL) then, and the cancel called again by another process: one record each, the killed worker\u2019s task running on it, the live workers\u2019 on theirs',
    { timeout: 60_000 * TIMING },
    async () => {
      const scene = await startScene('cancel-cut-short');
      const { env, zkPlan, running, live, liveStarts } = scene;
      const { hit: victim, hitStart: victimStart } = scene;

      // The first canceller dies right before its second write: the control record is written, the
      // touch that tells the workers is not, and no record is.
      const doomed = await ZkPlan.connect({
        connect: env.connectString,
        functions: stepFunctions(),
        sessionTimeoutMs: 10_000,
      });
      try {
        const crash = crashBeforeWrite(doomed.zk, 2);
        await expect(doomed.control.cancel(running.plan)).rejects.toThrow(/injected crash/);
        expect(crash.crashed()).toBe(true);
      } finally {
        await doomed.close().catch(() => undefined); // its session is closed already
      }
      expect((await zkPlan.plans.status(running.plan)).state).toBe('cancelled');
      expect((await zkPlan.zk.tryGetChildren(`${running.plan}/history`))?.children).toEqual([]);

      const killedAt = await victim.kill9();
      await cancelOnceLetGo(
        env,
        running.plan,
        liveStarts.map((start) => start.task),
      );
      const settledAfterMs = Date.now() - killedAt;
      expect(settledAfterMs).toBeLessThan((SESSION_TIMEOUT_MS * 2) / 3); // as in the first test

      const views = await expectOneRecordEach(zkPlan, running);
      expect(views.get(victimStart.task)).toMatchObject(runningOn(victimStart));
      for (const start of liveStarts) expect(views.get(start.task)).toMatchObject(runningOn(start));
      expect(views.get(running.idle)).toMatchObject({ state: 'cancelled', was: 'runnable' });
      expect(views.get(running.dependent)).toMatchObject({ state: 'unstarted', was: 'waiting' });
      printFigures('cancel-cut-short', {
        killToCancelSettledMs: settledAfterMs,
        records: running.tasks.length,
      });
    },
  );
});
