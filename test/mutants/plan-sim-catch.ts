/**
 * A mutant's self-test over the plan simulation (test/simulation): the first of the suite's own
 * seeds (from the mutant's `searchFrom` on, see search-seeds.ts) that finds a violation with the
 * mutant in place. Those seeds all pass on the product as it is (test/simulation/sim-*.test.ts), so
 * a violation here is the mutant's doing.
 */
import { expect } from 'vitest';
import { DEFAULT_SEEDS, firstViolation } from '../simulation/seeds.js';
import { searchSeeds } from './search-seeds.js';

export async function expectPlanSimulationCatches(mutant: string): Promise<void> {
  const seeds = searchSeeds(
    mutant,
    Array.from({ length: DEFAULT_SEEDS }, (_, index) => index + 1),
  );
  const caught = await firstViolation(seeds);
  expect(caught, `no seed of ${seeds[0]}…${DEFAULT_SEEDS} caught the mutant ${mutant}`).toBeDefined();
  console.log(`${mutant}: caught by seed ${caught?.seed} (searched from seed ${seeds[0]}): ${caught?.violation?.split('\n')[0]}`);
}
