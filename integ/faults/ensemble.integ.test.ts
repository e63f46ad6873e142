import { describe, expect, it } from 'vitest';
import type { EnsembleMember, ZooKeeperEnsemble } from '../../src/testing/index.js';
import { fourLetterWord } from '../../src/local-zookeeper/four-letter-word.js';
import {
  describeOverlap,
  executionsOf,
  overlapsOf,
  reExecutionCount,
} from '../support/execution-log.js';
import { useFaultEnv, type FaultEnv } from '../support/fault-env.js';
import {
  addLayeredPlan,
  awaitPlanCompletion,
  checkPlanOutcome,
  finishedShare,
  printFigures,
  tasksRun,
} from '../support/fault-plan.js';
import { TIMING, waitFor } from '../support/zk-test-env.js';

/**
 * Worker processes on a 3-server ensemble (loopback) run a plan while the leader is killed with
 * SIGKILL and restarted, then a follower: never more than one member down, so a quorum remains.
 * The plan must complete with every result right.
 *
 * The test's own client is closed while members are killed and restarted: a JVM spawned while it
 * is connected would inherit its socket (see src/testing/fault-harness/close-inherited-sockets.ts).
 */
const TICK_MS = 500;
const SESSION_TIMEOUT_MS = 6_000;

const faults = useFaultEnv();

async function modeOf(member: EnsembleMember): Promise<string | undefined> {
  if (!member.running) return undefined;
  try {
    return /^Mode: (\w+)/m.exec(
      await fourLetterWord('127.0.0.1', member.clientPort, 'srvr', 1_000),
    )?.[1];
  } catch {
    return undefined;
  }
}

/** The member in `mode` once every member serves as leader or follower. */
async function memberIn(
  ensemble: ZooKeeperEnsemble,
  mode: 'leader' | 'follower',
): Promise<EnsembleMember> {
  return await waitFor(
    `a ${mode} in a healthy ensemble`,
    async () => {
      const modes = await Promise.all(ensemble.members.map(modeOf));
      if (!modes.every((m) => m === 'leader' || m === 'follower')) return undefined;
      return ensemble.members[modes.indexOf(mode)];
    },
    { timeoutMs: 30_000, intervalMs: 100 },
  );
}

/** kill -9 of a member, then start() again on its ports and data; resolves once it serves again. */
async function killAndRestart(
  env: FaultEnv,
  member: EnsembleMember,
): Promise<{ killedAt: number; servingAt: number }> {
  const pid = member.pid;
  if (pid === undefined) throw new Error(`member ${member.id} is not running`);
  const killedAt = Date.now();
  process.kill(pid, 'SIGKILL');
  await member.stop(); // reaps it; keeps its data dir
  await member.start();
  env.watchPid(member.pid);
  return { killedAt, servingAt: Date.now() };
}

describe('a plan on a 3-server ensemble', () => {
  it(
    'completes with right results while the leader, then a follower, are killed with -9 and restarted',
    { timeout: 180_000 * TIMING },
    async () => {
      const seed = Number(process.env['FAULTS_SEED'] ?? Date.now() % 1_000_000);
      const env = await faults.start({
        name: 'ensemble',
        tickTimeMs: TICK_MS,
        ensembleSize: 3,
        workers: { loops: 2, sessionTimeoutMs: SESSION_TIMEOUT_MS },
      });
      const { ensemble, fleet } = env;
      // One attempt per task: failovers must never be charged to a task as failed tries.
      const plan = await env.zkPlan.createPlan(env.parent, { maxAttempts: 1 });
      const tasks = await addLayeredPlan(env.zkPlan, plan, {
        independent: 80,
        dependent: 90,
        fanIns: 30,
        msRange: [100, 300],
        seed,
      });
      await env.startWorkers(3);
      await env.zkPlan.markAsReady(plan);
      const startedAt = Date.now();
      await env.disconnect();

      const share = (): number => finishedShare(tasks, env.log());
      await waitFor('15% of the tasks to finish', () => share() >= 0.15, { timeoutMs: 60_000 });
      const leader = await memberIn(ensemble, 'leader');
      const shareAtLeaderKill = share();
      const leaderOutage = await killAndRestart(env, leader);
      const follower = await memberIn(ensemble, 'follower'); // all three serve again before the next kill
      const shareAtFollowerKill = share();
      const followerOutage = await killAndRestart(env, follower);
      await memberIn(ensemble, 'leader');

      const zkPlan = await env.connect();
      await awaitPlanCompletion(zkPlan, plan, {
        logFile: env.logFile,
        timeoutMs: 60_000 * TIMING,
        context: () => fleet.outputs(),
      });
      const makespanMs = Date.now() - startedAt;

      const entries = env.log();
      const executions = executionsOf(entries);
      const overlaps = overlapsOf(executions);
      const problems = await checkPlanOutcome(zkPlan, tasks, entries);
      printFigures('ensemble', {
        seed,
        tasks: tasks.length,
        leader: `member-${leader.id}`,
        leaderKilledAt: `${Math.round(shareAtLeaderKill * 100)}%`,
        leaderBackMs: leaderOutage.servingAt - leaderOutage.killedAt,
        follower: `member-${follower.id}`,
        followerKilledAt: `${Math.round(shareAtFollowerKill * 100)}%`,
        followerBackMs: followerOutage.servingAt - followerOutage.killedAt,
        workerZooErrorLines: fleet.countOutputLines(/ZOO_ERROR/),
        executions: executions.length,
        reExecutions: reExecutionCount(executions),
        abortedRuns: executions.filter((e) => e.abortedAt !== undefined).length,
        fencedOverlaps: overlaps.fenced.length,
        liveOverlaps: overlaps.live.length,
        makespanMs,
      });
      expect(shareAtFollowerKill).toBeLessThan(1); // both faults hit a running plan
      expect(problems).toEqual([]);
      expect(tasksRun(executions)).toBe(tasks.length);
      expect(overlaps.live.map(describeOverlap)).toEqual([]);
      expect(fleet.live).toHaveLength(3);
    },
  );
});
