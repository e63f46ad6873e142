import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  describeOverlap,
  executionsOf,
  overlapsOf,
  reExecutionCount,
} from '../support/execution-log.js';
import { pauseUntil, useFaultEnv, type FaultEnv } from '../support/fault-env.js';
import {
  addLayeredPlan,
  awaitPlanCompletion,
  checkPlanOutcome,
  finishedShare,
  printFigures,
  tasksRun,
  type PlannedTask,
} from '../support/fault-plan.js';
import { TIMING, waitFor } from '../support/zk-test-env.js';

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

const faults = useFaultEnv();

interface Setup {
  readonly env: FaultEnv;
  readonly plan: string;
  readonly tasks: PlannedTask[];
}

/** A server, a 120-task plan and two worker processes (2 loops each) running, the plan not ready yet. */
async function setUp(name: string, sessionTimeoutMs: number, seed: number): Promise<Setup> {
  const env = await faults.start({
    name: `restart-${name}`,
    tickTimeMs: TICK_MS,
    workers: { loops: 2, sessionTimeoutMs },
  });
  // One attempt per task: a ZooKeeper outage must never be charged to a task as a failed try.
  const plan = await env.zkPlan.createPlan(env.parent, { maxAttempts: 1 });
  const tasks = await addLayeredPlan(env.zkPlan, plan, {
    independent: 40,
    dependent: 60,
    fanIns: 20,
    msRange: [50, 150],
    seed,
  });
  await env.startWorkers(2);
  return { env, plan, tasks };
}

/** Server log lines (every run of the server on this data dir) that say a session expired or was refused as expired. */
function expiredSessionLines(env: FaultEnv): string[] {
  return readFileSync(env.server.logFile, 'utf8')
    .split('\n')
    .filter((line) => /Expiring session|Invalid session/.test(line));
}

async function untilShareFinished(setup: Setup, share: number): Promise<number> {
  return await waitFor(
    `${share * 100}% of the tasks to finish`,
    () => {
      const done = finishedShare(setup.tasks, setup.env.log());
      return done >= share ? done : undefined;
    },
    { timeoutMs: 60_000 },
  );
}

async function awaitCompletion(setup: Setup): Promise<void> {
  const { env } = setup;
  await awaitPlanCompletion(env.zkPlan, setup.plan, {
    logFile: env.logFile,
    timeoutMs: COMPLETION_TIMEOUT_MS,
    context: () => env.fleet.outputs(),
  });
}

describe('ZooKeeper restarts under running workers', () => {
  it(
    '(a) a restart within the session timeout: sessions survive, the plan completes, no task runs twice',
    { timeout: 120_000 * TIMING },
    async () => {
      const sessionTimeoutMs = 10_000;
      const setup = await setUp('a', sessionTimeoutMs, Number(process.env['FAULTS_SEED'] ?? 4242));
      await setup.env.zkPlan.markAsReady(setup.plan);
      const startedAt = Date.now();
      const shareAtStop = await untilShareFinished(setup, 0.3);
      const { stoppedAt, servingAt } = await setup.env.restartServer(async () => undefined);
      await awaitCompletion(setup);
      const makespanMs = Date.now() - startedAt;

      const entries = setup.env.log();
      const executions = executionsOf(entries);
      const problems = await checkPlanOutcome(setup.env.zkPlan, setup.tasks, entries);
      const expired = expiredSessionLines(setup.env);
      printFigures('zookeeper-restart (a) within the session timeout', {
        sessionTimeoutMs,
        downtimeMs: servingAt - stoppedAt,
        finishedAtStop: `${Math.round(shareAtStop * 100)}%`,
        tasks: setup.tasks.length,
        workerZooErrorLines: setup.env.fleet.countOutputLines(/ZOO_ERROR/),
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
      expect(setup.env.fleet.live).toHaveLength(2);
    },
  );

  it(
    '(b) a server down for longer than the session timeout: the plan completes with right results',
    { timeout: 120_000 * TIMING },
    async () => {
      const sessionTimeoutMs = 3_000;
      const setup = await setUp('b', sessionTimeoutMs, Number(process.env['FAULTS_SEED'] ?? 4343));
      await setup.env.zkPlan.markAsReady(setup.plan);
      const startedAt = Date.now();
      const shareAtStop = await untilShareFinished(setup, 0.3);
      // The fault itself: the server stays down for the session timeout + 3 s.
      const { stoppedAt, servingAt } = await setup.env.restartServer((stopped) =>
        pauseUntil(stopped + sessionTimeoutMs + 3_000),
      );
      await awaitCompletion(setup);
      const makespanMs = Date.now() - startedAt;

      const entries = setup.env.log();
      const executions = executionsOf(entries);
      const overlaps = overlapsOf(executions);
      const problems = await checkPlanOutcome(setup.env.zkPlan, setup.tasks, entries);
      const expired = expiredSessionLines(setup.env);
      printFigures('zookeeper-restart (b) longer than the session timeout', {
        sessionTimeoutMs,
        downtimeMs: servingAt - stoppedAt,
        finishedAtStop: `${Math.round(shareAtStop * 100)}%`,
        tasks: setup.tasks.length,
        workerZooErrorLines: setup.env.fleet.countOutputLines(/ZOO_ERROR/),
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
      expect(setup.env.fleet.live).toHaveLength(2);
    },
  );
});
