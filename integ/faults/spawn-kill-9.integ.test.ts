import { describe, expect, it } from 'vitest';
import { prng } from '../../examples/seeded-random.js';
import { call } from '../../src/index.js';
import { executionsOf, overlapsOf, describeOverlap } from '../support/execution-log.js';
import { useFaultEnv } from '../support/fault-env.js';
import { killAtRandom } from '../../src/testing/fault-harness/kill-chaos.js';
import { awaitPlanCompletion, printFigures } from '../support/fault-plan.js';
import { describeExit, type WorkerProcess } from '../support/worker-process.js';
import { TIMING } from '../support/zk-test-env.js';
import { fileURLToPath } from 'node:url';

/**
 * A 3-level nested map made at run time by `ctx.spawn` and `ctx.continueWith`
 * (integ/support/spawn-functions.ts: each map spawns 4 children and hands over to a sum of them;
 * 21 maps, 64 leaves, 21 sums), with a `total` task that depends on the root map, on three worker
 * processes, one of which, picked at random, is killed with SIGKILL every ~1.5 s and restarted.
 * The plan must complete; each label (a place in the tree) must have had exactly one task, however
 * often the maps that spawn them ran again after a kill (no duplicate children, none lost, one
 * continuation per map); every sum must be the number of leaves below it, the total and the root
 * map's kept result 64; no task ever run by two live owners at once.
 */
const SESSION_TIMEOUT_MS = 3_000;
const TICK_MS = 500;
const PROCESSES = 3;
const LOOPS = 3;
const KILL_EVERY_MS = 1_500;
const DEPTH = 3;
const WIDTH = 4;
const LEAF_MS = 300;
const SPAWN_FUNCTIONS = fileURLToPath(new URL('../support/spawn-functions.ts', import.meta.url));

const faults = useFaultEnv();

/** Every label the tree has: maps and sums at each inner place, leaves at the bottom. */
function expectedLabels(): string[] {
  const labels: string[] = [];
  const visit = (at: string, depth: number): void => {
    labels.push(`map${at}`, `sum${at}`);
    for (let index = 0; index < WIDTH; index++) {
      const child = `${at}.${index}`;
      if (depth > 1) visit(child, depth - 1);
      else labels.push(`leaf${child}`);
    }
  };
  visit('', DEPTH);
  labels.push('sum-total');
  return labels.sort();
}

describe('kill -9 of worker processes during a nested map made by ctx.spawn and ctx.continueWith', () => {
  it(
    'completes with one task per place in the tree, every sum right, while a random worker is killed every ~1.5 s',
    { timeout: 180_000 * TIMING },
    async () => {
      const seed = Number(process.env['FAULTS_SEED'] ?? Date.now() % 1_000_000);
      const random = prng(seed);
      const env = await faults.start({
        name: 'spawn-kill-9',
        tickTimeMs: TICK_MS,
        workers: {
          loops: LOOPS,
          sessionTimeoutMs: SESSION_TIMEOUT_MS,
          functionsModule: SPAWN_FUNCTIONS,
        },
      });
      const { zkPlan, fleet } = env;
      const plan = await zkPlan.createPlan(env.parent, { maxAttempts: 1 });
      const root = await zkPlan.addTask(
        plan,
        call('map', { at: '', depth: DEPTH, width: WIDTH, ms: LEAF_MS }),
        [],
        { keepResult: true },
      );
      const total = await zkPlan.addTask(plan, call('sum', { at: '-total' }), [root], {
        keepResult: true,
      });
      const slots: WorkerProcess[] = await env.startWorkers(PROCESSES);
      await zkPlan.markAsReady(plan);
      const startedAt = Date.now();
      const done = new AbortController();
      const completion = awaitPlanCompletion(zkPlan, plan, {
        logFile: env.logFile,
        timeoutMs: 120_000 * TIMING,
        context: () => fleet.outputs(),
      }).finally(() => done.abort());
      completion.catch(() => undefined);

      const chaos = killAtRandom({
        slots,
        fleet,
        random,
        startedAt,
        everyMs: KILL_EVERY_MS,
        jitterMs: 400,
        signal: done.signal,
      });
      let kills = 0;
      try {
        await completion;
      } finally {
        done.abort();
        kills = await chaos;
      }
      const makespanMs = Date.now() - startedAt;
      await Promise.all(fleet.live.map((worker) => worker.ready()));
      const exits = await Promise.all(fleet.live.map((worker) => worker.terminate()));
      expect(exits.map(describeExit)).toEqual(exits.map(() => 'exit code 0'));

      const entries = env.log();
      const executions = executionsOf(entries, fleet.kills());
      const tasksByLabel = new Map<string, Set<string>>();
      for (const entry of entries) {
        if (entry.label === undefined) continue;
        const tasks = tasksByLabel.get(entry.label) ?? new Set<string>();
        tasks.add(entry.task);
        tasksByLabel.set(entry.label, tasks);
      }
      const duplicated = [...tasksByLabel].filter(([, tasks]) => tasks.size !== 1);
      const sums = entries.filter(
        (entry) => entry.event === 'end' && entry.label?.startsWith('sum'),
      );
      const wrongSums = sums.filter((entry) => {
        const depth = DEPTH - ((entry.label ?? '').split('.').length - 1);
        return entry.result !== WIDTH ** depth;
      });
      const overlaps = overlapsOf(executions);
      printFigures('spawn-kill-9', {
        seed,
        labels: tasksByLabel.size,
        executions: executions.length,
        runsCutByKill: executions.filter((execution) => execution.ending === 'killed').length,
        mapRuns: executions.filter((execution) => execution.label?.startsWith('map')).length,
        kills,
        makespanMs,
      });

      expect(await zkPlan.planCompleted(plan)).toBe(true);
      expect([...tasksByLabel.keys()].sort()).toEqual(expectedLabels());
      expect(duplicated).toEqual([]);
      expect(wrongSums).toEqual([]);
      expect(new Set(sums.map((entry) => entry.label)).size).toBe(22);
      expect(await zkPlan.getResult(root)).toBe(WIDTH ** DEPTH);
      expect(await zkPlan.getResult(total)).toBe(WIDTH ** DEPTH);
      expect(overlaps.live.map(describeOverlap)).toEqual([]);
      expect(kills).toBeGreaterThanOrEqual(2);
    },
  );
});
