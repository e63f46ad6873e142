/**
 * What the hand-over tests share: a plan of a `split` that spawns a square per item and hands over
 * to their sum, a `report` depending on it, and the record of what every process's functions did.
 */
import { FunctionRegistry } from '../../src/exec/function-registry.js';
import type { TaskContext } from '../../src/exec/task-context.js';
import { call } from '../../src/exec/task-spec.js';
import type { MemoryProcess } from '../support/memory-plan.js';

export const PARENT = '/continue';

/** What the task functions of every process did. */
export interface Runs {
  splits: number;
  /** The task of each run of `square`, and of `sum`. */
  readonly squareTasks: string[];
  readonly sumTasks: string[];
  /** What each run of `report` was given: the split's result, as its dependent sees it. */
  readonly reported: unknown[];
  /** The continuation each run of `split` handed over to... as far as its spawn call tells. */
  readonly spawned: string[][];
}

export function newRuns(): Runs {
  return { splits: 0, squareTasks: [], sumTasks: [], reported: [], spawned: [] };
}

/**
 * `split(n)` spawns a `square` per item and hands over to a `sum` of them; `report` is given the
 * split's result (the sum, through the hand-over); `tree(lo, hi)` is a recursive split: the sum of
 * squares of [lo, hi), computed by halves handed over to an `add` of two subtrees.
 */
export function functions(runs: Runs): FunctionRegistry {
  return new FunctionRegistry()
    .register('split', async (ctx: TaskContext<[number]>) => {
      runs.splits += 1;
      const items = Array.from({ length: ctx.params[0] }, (_, item) => ({
        task: call('square', item),
      }));
      const paths = await ctx.spawn(items);
      runs.spawned.push(paths);
      return ctx.continueWith(call('sum'), paths);
    })
    .register('square', (ctx: TaskContext<[number]>) => {
      runs.squareTasks.push(ctx.task);
      return ctx.params[0] * ctx.params[0];
    })
    .register('sum', (ctx, ...parts: number[]) => {
      runs.sumTasks.push(ctx.task);
      return parts.reduce((total, part) => total + part, 0);
    })
    .register('report', (_ctx, value: unknown) => {
      runs.reported.push(value);
      return value;
    })
    .register('tree', async (ctx: TaskContext<[number, number]>) => {
      const [lo, hi] = ctx.params;
      if (hi - lo <= 2) return squaresBetween(lo, hi);
      const middle = Math.floor((lo + hi) / 2);
      const halves = await ctx.spawn([
        { task: call('tree', lo, middle) },
        { task: call('tree', middle, hi) },
      ]);
      return ctx.continueWith(call('add'), halves);
    })
    .register('add', (_ctx, left: number, right: number) => left + right);
}

export function squaresBetween(lo: number, hi: number): number {
  let total = 0;
  for (let item = lo; item < hi; item++) total += item * item;
  return total;
}

export async function splitAndReport(
  proc: MemoryProcess,
  count: number,
  planOptions: { maxAttempts?: number } = {},
): Promise<{ plan: string; split: string; report: string }> {
  const plan = await proc.zkPlan.createPlan(PARENT, planOptions);
  const split = await proc.zkPlan.addTask(plan, call('split', count), [], { keepResult: true });
  const report = await proc.zkPlan.addTask(plan, call('report'), [split], { keepResult: true });
  await proc.zkPlan.markAsReady(plan);
  return { plan, split, report };
}
