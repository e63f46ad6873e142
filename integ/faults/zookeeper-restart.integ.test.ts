import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ZkPlan } from '../../src/index.js';
import { startZooKeeper, type ZooKeeperServer } from '../../src/testing/index.js';
import { CleanupStack, addLayeredPlan, awaitPlanCompletion, checkPlanOutcome, finishedShare, printFigures, tasksRun, type PlannedTask } from '../support/fault-plan.js';
import {
  WorkerFleet,
  createFaultWorkspace,
  describeOverlap,
  executionsOf,
  overlapsOf,
  readExecutionLog,
  reExecutionCount,
  waitFor,
  type FaultWorkspace,
} from '../support/worker-process.js';
import { TIMING } from '../support/zk-test-env.js';

/**
 * A standalone ZooKeeper server stopped and restarted on the same port and data dir (so it keeps
 * its data and sessions) while two worker processes run a 120-task plan: (a) back within the
 * workers' session timeout, (b) down for longer than it.
 *
 * Note on (b): ZooKeeper does not expire sessions while it is down. The restarted server reloads
 * them from its data dir and starts their timeouts afresh, so workers that reconnect promptly keep
 * their sessions (and their owner nodes) even after an outage longer than the session timeout;
 * `expiredSessions` in the printed figures counts the server's "Expiring session" / "Invalid
 * session" lines. The new-session path is exercised by sigstop.integ.test.ts.
 *
 * The test's own client is closed before the server stops and a new one is connected after the
 * restart: only the workers go through the outage.
 */
const TICK_MS = 500;
const COMPLETION_TIMEOUT_MS = 30_000 * TIMING;

const cleanup = new CleanupStack();

afterEach(async () => {
  await cleanup.run();
});

interface Setup {
  readonly dataDir: string;
  readonly workspace: FaultWorkspace;
  readonly fleet: WorkerFleet;
  readonly plan: string;
  readonly tasks: PlannedTask[];
  /** The test's client (a new one after restart()). */
  zkPlan(): ZkPlan;
  /**
   * Closes the test's client, stops the server, lets `downFor` decide how long it stays down,
   * starts it again on the same port and data dir, and connects a new test client.
   */
  restart(downFor: (stoppedAt: number) => Promise<void>): Promise<{ stoppedAt: number; servingAt: number }>;
}

async function setUp(name: string, sessionTimeoutMs: number, seed: number): Promise<Setup> {
  // A data dir of ours: stop() leaves it, so the restarted server finds its data (and sessions) there.
  const dataDir = await mkdtemp(join(tmpdir(), `zk-plan-restart-${name}-`));
  cleanup.add('remove the data dir', () => rm(dataDir, { recursive: true, force: true }));
  let server: ZooKeeperServer = await startZooKeeper({ tickTimeMs: TICK_MS, dataDir });
  const servers = [server];
  cleanup.add('stop ZooKeeper', () => Promise.all(servers.map((s) => s.stop())));
  cleanup.watchPid(server.pid);
  const workspace = await createFaultWorkspace(`zk-plan-restart-${name}-`);
  cleanup.add('remove workspace', () => workspace.remove());
  const connectClient = async (): Promise<ZkPlan> => {
    const client = await ZkPlan.connect({ connect: server.connectString, sessionTimeoutMs: 10_000 });
    cleanup.add('close a test client', () => client.close());
    return client;
  };
  let zkPlan = await connectClient();
  const parent = `/faults/restart-${name}`;
  // One attempt per task: a ZooKeeper outage must never be charged to a task as a failed try.
  const plan = await zkPlan.createPlan(parent, { maxAttempts: 1 });
  const tasks = await addLayeredPlan(zkPlan, plan, { independent: 40, dependent: 60, fanIns: 20, msRange: [50, 150], seed });
  const fleet = new WorkerFleet({ connect: server.connectString, parent, workspace, loops: 2, sessionTimeoutMs });
  cleanup.add('stop worker processes', async () => {
    const alive = await fleet.stopAll();
    if (alive.length > 0) throw new Error(`worker processes still alive: ${alive.join(', ')}`);
  });
  const workers = [fleet.spawn(), fleet.spawn()];
  for (const worker of workers) cleanup.watchPid(worker.pid);
  await Promise.all(workers.map((worker) => worker.ready()));
  return {
    dataDir,
    workspace,
    fleet,
    plan,
    tasks,
    zkPlan: () => zkPlan,
    async restart(downFor) {
      const { port } = server;
      await zkPlan.close();
      const stoppedAt = Date.now();
      await server.stop();
      await downFor(stoppedAt);
      server = await startZooKeeper({ tickTimeMs: TICK_MS, dataDir, port });
      const servingAt = Date.now();
      servers.push(server);
      cleanup.watchPid(server.pid);
      zkPlan = await connectClient();
      return { stoppedAt, servingAt };
    },
  };
}

/** Server log lines (every run of the server on this data dir) that say a session expired or was refused as expired. */
function expiredSessionLines(dataDir: string): string[] {
  return readFileSync(join(dataDir, 'zookeeper.log'), 'utf8')
    .split('\n')
    .filter((line) => /Expiring session|Invalid session/.test(line));
}

async function untilShareFinished(setup: Setup, share: number): Promise<number> {
  return await waitFor(
    `${share * 100}% of the tasks to finish`,
    () => {
      const done = finishedShare(setup.tasks, readExecutionLog(setup.workspace.logFile));
      return done >= share ? done : undefined;
    },
    { timeoutMs: 60_000 },
  );
}

async function awaitCompletion(setup: Setup): Promise<void> {
  await awaitPlanCompletion(setup.zkPlan(), setup.plan, { logFile: setup.workspace.logFile, timeoutMs: COMPLETION_TIMEOUT_MS, context: () => setup.fleet.outputs() });
}

describe('ZooKeeper restarts under running workers', () => {
  it('(a) a restart within the session timeout: sessions survive, the plan completes, no task runs twice', { timeout: 120_000 * TIMING }, async () => {
    const sessionTimeoutMs = 10_000;
    const setup = await setUp('a', sessionTimeoutMs, Number(process.env['FAULTS_SEED'] ?? 4242));
    await setup.zkPlan().markAsReady(setup.plan);
    const startedAt = Date.now();
    const shareAtStop = await untilShareFinished(setup, 0.3);
    const { stoppedAt, servingAt } = await setup.restart(async () => undefined);
    await awaitCompletion(setup);
    const makespanMs = Date.now() - startedAt;

    const entries = readExecutionLog(setup.workspace.logFile);
    const executions = executionsOf(entries);
    const problems = await checkPlanOutcome(setup.zkPlan(), setup.tasks, entries);
    const expired = expiredSessionLines(setup.dataDir);
    printFigures('zookeeper-restart (a) within the session timeout', {
      sessionTimeoutMs,
      downtimeMs: servingAt - stoppedAt,
      finishedAtStop: `${Math.round(shareAtStop * 100)}%`,
      tasks: setup.tasks.length,
      workerZooErrorLines: setup.fleet.countOutputLines(/ZOO_ERROR/),
      executions: executions.length,
      reExecutions: reExecutionCount(executions),
      expiredSessions: expired.length,
      makespanMs,
    });
    expect(servingAt - stoppedAt).toBeLessThan(sessionTimeoutMs);
    expect(problems).toEqual([]);
    expect(tasksRun(executions)).toBe(setup.tasks.length);
    expect(reExecutionCount(executions)).toBe(0);
    expect(expired).toEqual([]); // no worker session expired
    expect(setup.fleet.live).toHaveLength(2);
  });

  it('(b) a server down for longer than the session timeout: the plan completes with right results', { timeout: 120_000 * TIMING }, async () => {
    const sessionTimeoutMs = 3_000;
    const setup = await setUp('b', sessionTimeoutMs, Number(process.env['FAULTS_SEED'] ?? 4343));
    await setup.zkPlan().markAsReady(setup.plan);
    const startedAt = Date.now();
    const shareAtStop = await untilShareFinished(setup, 0.3);
    // The fault itself: the server stays down for the session timeout + 3 s.
    const { stoppedAt, servingAt } = await setup.restart((stopped) => new Promise((resolve) => setTimeout(resolve, stopped + sessionTimeoutMs + 3_000 - Date.now())));
    await awaitCompletion(setup);
    const makespanMs = Date.now() - startedAt;

    const entries = readExecutionLog(setup.workspace.logFile);
    const executions = executionsOf(entries);
    const overlaps = overlapsOf(executions);
    const problems = await checkPlanOutcome(setup.zkPlan(), setup.tasks, entries);
    const expired = expiredSessionLines(setup.dataDir);
    printFigures('zookeeper-restart (b) longer than the session timeout', {
      sessionTimeoutMs,
      downtimeMs: servingAt - stoppedAt,
      finishedAtStop: `${Math.round(shareAtStop * 100)}%`,
      tasks: setup.tasks.length,
      workerZooErrorLines: setup.fleet.countOutputLines(/ZOO_ERROR/),
      executions: executions.length,
      reExecutions: reExecutionCount(executions),
      abortedRuns: executions.filter((e) => e.abortedAt !== undefined).length,
      expiredSessions: expired.length,
      fencedOverlaps: overlaps.fenced.length,
      makespanMs,
    });
    expect(servingAt - stoppedAt).toBeGreaterThan(sessionTimeoutMs);
    expect(problems).toEqual([]);
    expect(tasksRun(executions)).toBe(setup.tasks.length);
    expect(overlaps.live.map(describeOverlap)).toEqual([]);
    expect(setup.fleet.live).toHaveLength(2);
  });
});
