/**
 * The spec's stress test as a program: N workers run a plan of M tasks where the first K tasks have
 * no inputs and task i ≥ K depends on K distinct earlier tasks picked at random. Every task sleeps
 * 100 ms and checks that
 *   (a) no other worker runs the same task at the same time (a per-task in-flight counter must be 1), and
 *   (b) its args are the results of its dependencies in the order given to addTask (task i returns i).
 * It also checks that every task ran exactly once, and only after all its dependencies had finished.
 *
 *   npx tsx examples/stress.ts
 *   N=20 M=300 K=5 SEED=42 SESSIONS=4 npx tsx examples/stress.ts
 *
 * Env: N workers (10), M tasks (100), K dependencies (10), SEED (random, printed), SESSIONS: how many
 * ZooKeeper sessions (ZkPlan instances) the N workers are spread over (2), SLEEP_MS (100).
 */
import { FunctionRegistry, ZkPlan, call, type TaskContext, type WorkerPool } from '../src/index.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { runMain, withZooKeeper } from './local-zookeeper.js';
import { pickDistinct, prng } from './seeded-random.js';

function intFromEnv(name: string, fallback: number, min: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < min)
    throw new Error(`${name} must be a whole number ≥ ${min}, got ${JSON.stringify(raw)}`);
  return value;
}

await runMain('stress', async () => {
  const N = intFromEnv('N', 10, 1);
  const M = intFromEnv('M', 100, 1);
  const K = intFromEnv('K', 10, 0);
  const sessions = Math.min(intFromEnv('SESSIONS', 2, 1), N);
  const sleepMs = intFromEnv('SLEEP_MS', 100, 0);
  const seed = intFromEnv('SEED', Math.floor(Math.random() * 2 ** 31), 0);
  console.log(
    `stress: N=${N} workers over ${sessions} session(s), M=${M} tasks, K=${K} dependencies, ${sleepMs} ms per task, SEED=${seed}`,
  );

  // The plan's shape, decided up front from the seed.
  const random = prng(seed);
  const deps: number[][] = Array.from({ length: M }, (_, i) =>
    i < K ? [] : pickDistinct(i, K, random),
  );
  const depth: number[] = [];
  deps.forEach((ds, i) => (depth[i] = 1 + Math.max(0, ...ds.map((d) => depth[d] ?? 0))));
  const criticalPath = Math.max(...depth);
  const lowerBoundMs = Math.max(criticalPath, Math.ceil(M / N)) * sleepMs;

  // What the tasks observe.
  const inFlight = new Array<number>(M).fill(0);
  const runs = new Array<number>(M).fill(0);
  const startedAt = new Array<number>(M).fill(Number.NaN);
  const finishedAt = new Array<number>(M).fill(Number.NaN);
  let overlaps = 0;
  let argMismatches = 0;
  let orderViolations = 0;
  let running = 0;
  let maxRunning = 0;
  const problems: string[] = [];
  const note = (problem: string): void => {
    if (problems.length < 10) problems.push(problem);
  };

  const functions = new FunctionRegistry().register(
    'stress.task',
    async (ctx: TaskContext<[number, number[]]>, ...args: number[]) => {
      const [i, expected] = ctx.params;
      // (a) one run at a time per task. Violations are counted, not thrown: a throw would make the task run again.
      inFlight[i] = (inFlight[i] ?? 0) + 1;
      runs[i] = (runs[i] ?? 0) + 1;
      running += 1;
      maxRunning = Math.max(maxRunning, running);
      startedAt[i] = performance.now();
      try {
        if (inFlight[i] !== 1) {
          overlaps += 1;
          note(
            `task ${i} started on ${ctx.workerId} while ${(inFlight[i] ?? 0) - 1} other run(s) of it were in flight`,
          );
        }
        // (b) args = results of the dependencies, in addTask order (checked against the params and our own table).
        const local = deps[i] ?? [];
        if (
          args.length !== expected.length ||
          args.some((arg, j) => arg !== expected[j] || arg !== local[j])
        ) {
          argMismatches += 1;
          note(`task ${i}: args ${JSON.stringify(args)}, expected ${JSON.stringify(expected)}`);
        }
        for (const d of local) {
          if (!(finishedAt[d]! <= startedAt[i]!)) {
            orderViolations += 1;
            note(`task ${i} started before its dependency ${d} finished`);
          }
        }
        await sleep(sleepMs, undefined, { signal: ctx.signal });
        return i;
      } finally {
        finishedAt[i] = performance.now();
        inFlight[i] = (inFlight[i] ?? 1) - 1;
        running -= 1;
      }
    },
  );

  await withZooKeeper(async (connect) => {
    const zkPlans: ZkPlan[] = [];
    const pools: WorkerPool[] = [];
    const parent = `/zk-plan-examples/stress-${process.pid}-${Date.now()}`;
    let failed = 0;
    let workerErrors = 0;
    const completed = new Set<string>();
    let completions = 0;
    try {
      for (let s = 0; s < sessions; s++) {
        const zkPlan = await ZkPlan.connect({ connect, functions });
        zkPlans.push(zkPlan);
        zkPlan.on('task:completed', ({ task }) => {
          completions += 1;
          completed.add(task);
        });
        zkPlan.on('task:failed', ({ task, workerId, error }) => {
          failed += 1;
          console.error(`  task failed: ${task} on ${workerId}: ${error.message}`);
        });
        zkPlan.on('worker:error', ({ workerId, error }) => {
          workerErrors += 1;
          console.error(`  worker error on ${workerId}: ${error.message}`);
        });
      }
      const builder = zkPlans[0] as ZkPlan;
      console.log(`connect string: ${connect}`);

      const buildStarted = performance.now();
      const plan = await builder.createPlan(parent);
      const tasks: string[] = [];
      for (let i = 0; i < M; i++) {
        const ds = deps[i] ?? [];
        tasks.push(
          await builder.addTask(
            plan,
            call('stress.task', i, ds),
            ds.map((d) => tasks[d] as string),
          ),
        );
      }
      console.log(
        `plan ${plan}: ${M} tasks, ${deps.flat().length} dependencies, built in ${Math.round(performance.now() - buildStarted)} ms`,
      );
      console.log(`critical path ${criticalPath} tasks: makespan ≥ ${lowerBoundMs} ms`);

      const started = performance.now();
      await builder.markAsReady(plan);
      // The N loops, spread over the sessions: one pool per session.
      zkPlans.forEach((zkPlan, s) => {
        const count = Math.floor(N / sessions) + (s < N % sessions ? 1 : 0);
        pools.push(zkPlan.startWorkers(parent, { count, drainTimeoutMs: 5_000 }));
      });
      const timeoutMs = Math.max(60_000, 3 * M * sleepMs);
      try {
        await builder.waitForCompletion(plan, { timeoutMs });
      } catch (error) {
        console.error(
          `plan did not complete: ${error instanceof Error ? error.message : String(error)}`,
        );
      }
      const makespanMs = performance.now() - started;

      const neverRan = runs.filter((count) => count === 0).length;
      const duplicates = runs.reduce((sum, count) => sum + Math.max(0, count - 1), 0);
      console.log(
        `\nmakespan ${Math.round(makespanMs)} ms (lower bound ${lowerBoundMs} ms, ×${(makespanMs / lowerBoundMs).toFixed(2)}); ` +
          `at most ${maxRunning} tasks ran at once (N=${N})`,
      );
      const checks: Array<[string, number, number]> = [
        ['tasks completed', completed.size, M],
        ['task:completed events', completions, M],
        ['tasks never run', neverRan, 0],
        ['duplicate executions', duplicates, 0],
        ['overlapping executions', overlaps, 0],
        ['argument mismatches', argMismatches, 0],
        ['started before a dependency finished', orderViolations, 0],
        ['task failures', failed, 0],
        ['worker errors', workerErrors, 0],
      ];
      for (const [label, actual, expected] of checks) {
        console.log(
          `  ${actual === expected ? 'ok  ' : 'FAIL'}  ${label.padEnd(38)} ${String(actual).padStart(5)}  (expected ${expected})`,
        );
      }
      const planDone = await builder.planCompleted(plan);
      console.log(`  ${planDone ? 'ok  ' : 'FAIL'}  plan completed`);
      for (const problem of problems) console.error(`  ${problem}`);
      const failedChecks = checks
        .filter(([, actual, expected]) => actual !== expected)
        .map(([label]) => label);
      if (!planDone) failedChecks.push('plan completed');
      if (failedChecks.length > 0)
        throw new Error(`stress test failed (SEED=${seed}): ${failedChecks.join(', ')}`);
      console.log(`stress test passed (SEED=${seed})`);
    } finally {
      await Promise.all(pools.map((pool) => pool.stop()));
      await zkPlans[0]?.zk
        .deleteRecursive(parent)
        .catch((error: unknown) => console.error(`could not remove ${parent}: ${String(error)}`));
      await Promise.all(zkPlans.map((zkPlan) => zkPlan.close()));
    }
  });
});
