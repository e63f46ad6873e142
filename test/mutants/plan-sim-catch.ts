/**
 * A mutant's self-test over the plan simulation (test/simulation): the first of the suite's own
 * seeds that finds a violation with the mutant in place. Those seeds all pass on the product as it
 * is (test/simulation/sim-*.test.ts), so a violation here is the mutant's doing.
 */
import { expect } from 'vitest';
import { DEFAULT_SEEDS, firstViolation } from '../simulation/seeds.js';

export async function expectPlanSimulationCatches(mutant: string): Promise<void> {
  const seeds = Array.from({ length: DEFAULT_SEEDS }, (_, index) => index + 1);
  const caught = await firstViolation(seeds);
  expect(caught, `no seed of 1…${DEFAULT_SEEDS} caught the mutant ${mutant}`).toBeDefined();
  console.log(`${mutant}: caught by seed ${caught?.seed}: ${caught?.violation?.split('\n')[0]}`);
}
