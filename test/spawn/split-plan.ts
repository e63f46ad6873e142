/**
 * The spawning plan of the ctx.spawn tests: `split(n)` spawns a `square` per item and their `sum`;
 * what every run of each function did is counted in `Runs`.
 */
import { FunctionRegistry } from '../../src/exec/function-registry.js';
import type { TaskContext } from '../../src/exec/task-context.js';
import { call } from '../../src/exec/task-spec.js';
import type { MemoryProcess } from '../support/memory-plan.js';

export const PARENT = '/spawn';

/** What the task functions of every process did. */
export interface Runs {
  readonly squares: Map<number, number>;
  /** The task of each run of `square`. */
  readonly squareTasks: string[];
  splits: number;
  sums: number;
  /** Paths each run of `split` got back from its spawn call. */
  readonly spawned: string[][];
}

export function newRuns(): Runs {
  return { squares: new Map(), squareTasks: [], splits: 0, sums: 0, spawned: [] };
}

/**
 * `split(n)` spawns a `square` per item and a `sum` of them all (args: their indices), and returns
 * the sum's path; `square(i)` is i², `sum` adds its inputs. `beforeSpawn`, when given, is awaited
 * by each run of `split` right before its spawn call.
 */
export function functions(runs: Runs, beforeSpawn?: () => Promise<void>): FunctionRegistry {
  return new FunctionRegistry()
    .register('split', async (ctx: TaskContext<[number]>) => {
      runs.splits += 1;
      await beforeSpawn?.();
      const count = ctx.params[0];
      const items = Array.from({ length: count }, (_, item) => ({
        task: call('square', item),
        key: `square-${item}`,
      }));
      const paths = await ctx.spawn([
        ...items,
        {
          task: call('sum'),
          args: items.map((_, index) => index),
          options: { keepResult: true },
        },
      ]);
      runs.spawned.push(paths);
      return paths.at(-1);
    })
    .register('square', (ctx: TaskContext<[number]>) => {
      const item = ctx.params[0];
      runs.squares.set(item, (runs.squares.get(item) ?? 0) + 1);
      runs.squareTasks.push(ctx.task);
      return item * item;
    })
    .register('sum', (_ctx, ...parts: number[]) => {
      runs.sums += 1;
      return parts.reduce((total, part) => total + part, 0);
    });
}

export async function runSplit(
  proc: MemoryProcess,
  count: number,
): Promise<{ plan: string; split: string }> {
  const plan = await proc.zkPlan.createPlan(PARENT);
  const split = await proc.zkPlan.addTask(plan, call('split', count), [], { keepResult: true });
  await proc.zkPlan.markAsReady(plan);
  return { plan, split };
}

export function sumOfSquares(count: number): number {
  return Array.from({ length: count }, (_, item) => item * item).reduce((a, b) => a + b, 0);
}
