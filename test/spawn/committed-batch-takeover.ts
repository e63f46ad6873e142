/**
 * The order of a spawn's crash that random faults hardly ever draw (the plan simulation's dynamic
 * profile caught its defect by one seed in thousands, and the crash sweep of task-spawner.test.ts
 * not at all): the first run of a spawning task dies right after its batch's commit marker, before
 * its spawn record gets the paths; the workers make the dead run's committed tasks ready (as they
 * do for any dead builder's committed batch) before the next run of the spawning task looks at its
 * record. That run must take the committed batch, not write a second one: both would run. The
 * product's test (task-spawner.test.ts) and the self-test of the mutant
 * spawn-ignores-committed-batch (test/mutants) run it.
 */
import { expect, vi } from 'vitest';
import { MemoryZooKeeper } from '../../src/testing/index.js';
import { CrashScheduler, Victim } from '../support/crash-scheduler.js';
import { FAST_BACKOFF, memoryProcess, type MemoryProcess } from '../support/memory-plan.js';
import { PARENT, functions, newRuns, runSplit, sumOfSquares } from './split-plan.js';

/** Runs the scenario; rejects (an assertion) when the second run does not take the dead run's batch. */
export async function committedBatchTakeover(): Promise<void> {
  const processes: MemoryProcess[] = [];
  try {
    await scenario(processes);
  } finally {
    await Promise.all(processes.map(({ zkPlan }) => zkPlan.close().catch(() => undefined)));
  }
}

async function scenario(processes: MemoryProcess[]): Promise<void> {
  const runs = newRuns();
  const scheduler = new CrashScheduler();
  const server = new MemoryZooKeeper({ scheduler });
  const builder = memoryProcess(server, 'builder', functions(runs));
  processes.push(builder);
  const { plan, split } = await runSplit(builder, 2);
  // The first run dies right after its batch's commit marker, before its record gets the paths.
  // Not closed afterwards: it crashed, and nothing it sends is answered any more.
  const doomed = memoryProcess(server, 'doomed', functions(runs));
  const victim = new Victim(
    server,
    doomed.zk,
    0,
    (op, path) => op === 'setData' && path === `${split}/spawn-0`,
  );
  scheduler.victim = victim;
  const doomedPool = doomed.zkPlan.startWorkers(PARENT, { backoff: FAST_BACKOFF });
  await victim.crashed;
  scheduler.victim = undefined;
  void doomedPool.stop().catch(() => undefined);
  const spawnedByDeadRun = (): string[] =>
    server
      .children(plan)
      .filter((name) => name.startsWith('task-'))
      .map((name) => `${plan}/${name}`)
      .filter((task) => task !== split);
  const deadRunTasks = spawnedByDeadRun();
  expect(deadRunTasks).toHaveLength(3); // two squares and the sum, not ready
  // The next run of split waits until the workers have made the dead run's tasks ready.
  const survivor = memoryProcess(
    server,
    'survivor',
    functions(runs, () =>
      vi.waitFor(
        () =>
          expect(
            spawnedByDeadRun().every((task) => server.exists(`${task}/ready`)),
            "the dead run's tasks are ready",
          ).toBe(true),
        { timeout: 5_000, interval: 10 },
      ),
    ),
    { fullScanIntervalMs: 50 },
  );
  processes.push(survivor);
  const pool = survivor.zkPlan.startWorkers(PARENT, { count: 2, backoff: FAST_BACKOFF });
  await survivor.zkPlan.waitForCompletion(plan, { timeoutMs: 10_000 });
  await pool.stop();

  expect(runs.splits).toBe(2);
  // The second run got the dead run's tasks, and only those ran.
  expect(runs.spawned.map((paths) => new Set(paths))).toEqual([new Set(deadRunTasks)]);
  expect(spawnedByDeadRun()).toEqual([]); // each ran and was deleted; no second set was made
  const [spawned = []] = runs.spawned;
  expect(new Set(runs.squareTasks)).toEqual(new Set(spawned.slice(0, 2)));
  expect([...runs.squares.entries()].sort()).toEqual([
    [0, 1],
    [1, 1],
  ]);
  expect(runs.sums).toBe(1);
  const sum = (await survivor.zkPlan.getResult(split)) as string;
  expect(await survivor.zkPlan.getResult(sum)).toBe(sumOfSquares(2));
}
