import { describe, expect, it } from 'vitest';
import { FunctionRegistry, call } from '../src/index.js';
import { pickDistinct, prng } from '../examples/seeded-random.js';
import { useZooKeeper } from './support/zk-test-env.js';

/**
 * The spec's stress test: N workers run a random plan of M tasks, each depending on K random
 * earlier tasks. Every task checks that no other worker runs it at the same time and that its
 * arguments are the expected ones in order; every task must complete.
 */
const env = useZooKeeper('stress');

const N = Number(process.env['STRESS_N'] ?? 10);
const M = Number(process.env['STRESS_M'] ?? 100);
const K = Number(process.env['STRESS_K'] ?? 10);
const TASK_MS = 100;

describe('stress (the spec: N workers, M tasks, K random dependencies)', () => {
  it(`runs ${M} tasks with ${K} dependencies each on ${N} workers: each exactly once at a time, with the right arguments`, async () => {
    const seed = Number(process.env['STRESS_SEED'] ?? Date.now() % 1_000_000);
    const next = prng(seed);
    const inFlight = new Array<number>(M).fill(0);
    const completed = new Set<number>();
    const problems: string[] = [];
    const functions = new FunctionRegistry().register(
      'stressTask',
      async (ctx, ...args: number[]) => {
        const [index, expected] = ctx.params as [number, number[]];
        inFlight[index] = (inFlight[index] ?? 0) + 1;
        if (inFlight[index] !== 1)
          problems.push(`task ${index}: ${inFlight[index]} workers at once`);
        if (JSON.stringify(args) !== JSON.stringify(expected))
          problems.push(
            `task ${index}: args ${JSON.stringify(args)}, expected ${JSON.stringify(expected)}`,
          );
        await new Promise((resolve) => setTimeout(resolve, TASK_MS));
        completed.add(index);
        inFlight[index] = (inFlight[index] ?? 1) - 1;
        return index;
      },
    );
    const zkPlan = await env.zkPlan({ functions });
    const parent = env.root();
    const plan = await zkPlan.createPlan(parent);
    const tasks: string[] = [];
    for (let index = 0; index < M; index++) {
      const selected = index < K ? [] : pickDistinct(index, K, next);
      tasks.push(
        await zkPlan.addTask(
          plan,
          call('stressTask', index, selected),
          selected.map((dependency) => tasks[dependency]!),
        ),
      );
    }
    await zkPlan.markAsReady(plan);
    const started = performance.now();
    const pool = zkPlan.startWorkers(parent, { count: N });
    await zkPlan.waitForCompletion(plan, { timeoutMs: 120_000 });
    const makespanMs = performance.now() - started;
    await pool.stop();
    console.log(
      `stress seed=${seed} N=${N} M=${M} K=${K}: makespan ${Math.round(makespanMs)} ms, ${completed.size} tasks completed, ${problems.length} problems`,
    );
    expect(problems).toEqual([]);
    expect(completed.size).toBe(M);
    expect(await zkPlan.planCompleted(plan)).toBe(true);
  });
});
