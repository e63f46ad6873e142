import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ZkPlan } from '../../src/index.js';
import { startEnsemble, type EnsembleMember, type ZooKeeperEnsemble } from '../../src/testing/index.js';
import { fourLetterWord } from '../../src/server/four-letter-word.js';
import { CleanupStack, addLayeredPlan, awaitPlanCompletion, checkPlanOutcome, finishedShare, printFigures, tasksRun } from '../support/fault-plan.js';
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
 * Worker processes on a 3-server ensemble (loopback) run a plan while the leader is killed with
 * SIGKILL and restarted, then a follower: never more than one member down, so a quorum remains.
 * The plan must complete with every result right.
 *
 * The test's own client is closed while members are killed and restarted: a JVM spawned while it
 * is connected would inherit its socket (see the preload note in worker-process.ts).
 */
const TICK_MS = 500;
const SESSION_TIMEOUT_MS = 6_000;

const cleanup = new CleanupStack();
let ensemble: ZooKeeperEnsemble;
let workspace: FaultWorkspace;

beforeEach(async () => {
  ensemble = await startEnsemble(3, { tickTimeMs: TICK_MS });
  cleanup.add('stop the ensemble', () => ensemble.stop());
  for (const member of ensemble.members) cleanup.watchPid(member.pid);
  workspace = await createFaultWorkspace('zk-plan-ensemble-');
  cleanup.add('remove workspace', () => workspace.remove());
});

afterEach(async () => {
  await cleanup.run();
});

async function modeOf(member: EnsembleMember): Promise<string | undefined> {
  if (!member.running) return undefined;
  try {
    return /^Mode: (\w+)/m.exec(await fourLetterWord('127.0.0.1', member.clientPort, 'srvr', 1_000))?.[1];
  } catch {
    return undefined;
  }
}

/** The member in `mode` once every member serves as leader or follower. */
async function memberIn(mode: 'leader' | 'follower'): Promise<EnsembleMember> {
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
async function killAndRestart(member: EnsembleMember): Promise<{ killedAt: number; servingAt: number }> {
  const pid = member.pid;
  if (pid === undefined) throw new Error(`member ${member.id} is not running`);
  const killedAt = Date.now();
  process.kill(pid, 'SIGKILL');
  await member.stop(); // reaps it; keeps its data dir
  await member.start();
  cleanup.watchPid(member.pid);
  return { killedAt, servingAt: Date.now() };
}

describe('a plan on a 3-server ensemble', () => {
  it('completes with right results while the leader, then a follower, are killed with -9 and restarted', { timeout: 180_000 * TIMING }, async () => {
    const seed = Number(process.env['FAULTS_SEED'] ?? Date.now() % 1_000_000);
    const firstClient = await ZkPlan.connect({ connect: ensemble.connectString, sessionTimeoutMs: 10_000 });
    cleanup.add('close the first test client', () => firstClient.close());
    let zkPlan = firstClient;
    const parent = '/faults/ensemble';
    // One attempt per task: failovers must never be charged to a task as failed tries.
    const plan = await zkPlan.createPlan(parent, { maxAttempts: 1 });
    const tasks = await addLayeredPlan(zkPlan, plan, { independent: 80, dependent: 90, fanIns: 30, msRange: [100, 300], seed });

    const fleet = new WorkerFleet({ connect: ensemble.connectString, parent, workspace, loops: 2, sessionTimeoutMs: SESSION_TIMEOUT_MS });
    cleanup.add('stop worker processes', async () => {
      const alive = await fleet.stopAll();
      if (alive.length > 0) throw new Error(`worker processes still alive: ${alive.join(', ')}`);
    });
    const workers = [fleet.spawn(), fleet.spawn(), fleet.spawn()];
    for (const worker of workers) cleanup.watchPid(worker.pid);
    await Promise.all(workers.map((worker) => worker.ready()));
    await zkPlan.markAsReady(plan);
    const startedAt = Date.now();
    await zkPlan.close();

    const share = (): number => finishedShare(tasks, readExecutionLog(workspace.logFile));
    await waitFor('15% of the tasks to finish', () => share() >= 0.15, { timeoutMs: 60_000 });
    const leader = await memberIn('leader');
    const shareAtLeaderKill = share();
    const leaderOutage = await killAndRestart(leader);
    const follower = await memberIn('follower'); // all three serve again before the next kill
    const shareAtFollowerKill = share();
    const followerOutage = await killAndRestart(follower);
    await memberIn('leader');

    const secondClient = await ZkPlan.connect({ connect: ensemble.connectString, sessionTimeoutMs: 10_000 });
    cleanup.add('close the second test client', () => secondClient.close());
    zkPlan = secondClient;
    await awaitPlanCompletion(zkPlan, plan, { logFile: workspace.logFile, timeoutMs: 60_000 * TIMING, context: () => fleet.outputs() });
    const makespanMs = Date.now() - startedAt;

    const entries = readExecutionLog(workspace.logFile);
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
  });
});
