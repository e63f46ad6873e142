/**
 * The plan the export, import and rerun tests move about (unit and integration): extract → clean →
 * report, audit ← extract, and flaky → late. `clean` waits on a gate, so a plan can be caught
 * half-way; `flaky` fails for good where asked to.
 */
import { FunctionRegistry, PermanentError, type TaskContext } from '../../src/index.js';
import type { PlanSpec } from '../../src/spec/plan-spec.js';

export const SNAPSHOT_SPEC: PlanSpec = {
  tasks: {
    extract: { fn: 'count', params: ['extract', 10] },
    clean: { fn: 'gated', params: ['clean', 1], inputs: ['extract'] },
    report: { fn: 'count', params: ['report', 100], inputs: ['clean', 'extract'] },
    audit: { fn: 'count', params: ['audit', 1000], inputs: ['extract'] },
    flaky: { fn: 'flaky', params: ['flaky', 5] },
    late: { fn: 'count', params: ['late', 7], inputs: ['flaky'] },
  },
};

/** The functions: each run's label goes to `runs` (`flaky (failed)` for a failed one). */
export function snapshotFunctions(
  runs: string[],
  flakyFails: boolean,
  gate: Promise<void>,
): FunctionRegistry {
  const sum = (ctx: TaskContext<unknown[]>, inputs: number[]): number => {
    runs.push(String(ctx.params[0]));
    return (ctx.params[1] as number) + inputs.reduce((a, b) => a + b, 0);
  };
  return new FunctionRegistry()
    .register('count', (ctx: TaskContext<unknown[]>, ...inputs: number[]) => sum(ctx, inputs))
    .register('gated', async (ctx: TaskContext<unknown[]>, ...inputs: number[]) => {
      await gate;
      return sum(ctx, inputs);
    })
    .register('flaky', (ctx: TaskContext<unknown[]>, ...inputs: number[]) => {
      if (flakyFails) {
        runs.push('flaky (failed)');
        throw new PermanentError('flaky fails here');
      }
      return sum(ctx, inputs);
    });
}
