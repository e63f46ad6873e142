/**
 * Which seeds a simulation runs, and running them until one breaks an invariant. Every simulation
 * reads its seeds from the environment the same way: `<NAME>_SEEDS=<n>` runs seeds 1 to n,
 * `<NAME>_SEED=<n>` replays just seed n (an empty value counts as unset). Its test and the self-tests
 * of its mutants take the same list, so the seeds a mutant's search runs are seeds the product passes.
 */
import type { SeedResult } from './violation-report.js';

/** The seeds of the simulation called `name` (SIM, JOB_SIM, SCHEDULE_LONG_SIM…): 1 to `defaultCount` unless the environment says otherwise. */
export function seedsFromEnv(name: string, defaultCount: number): readonly number[] {
  const only = process.env[`${name}_SEED`];
  if (only !== undefined && only !== '') return [Number(only)];
  const count = Number(process.env[`${name}_SEEDS`] ?? defaultCount);
  return Array.from({ length: count }, (_, index) => index + 1);
}

/** Runs the seeds in order and returns the result of the first that breaks an invariant, or undefined when none does. */
export async function firstViolation<R extends SeedResult>(
  seeds: readonly number[],
  run: (seed: number) => Promise<R>,
): Promise<R | undefined> {
  for (const seed of seeds) {
    const result = await run(seed);
    if (result.violation !== undefined) return result;
  }
  return undefined;
}
