/**
 * Which of a simulation's seeds a mutant's self-test runs: the suite's own seeds, from the mutant's
 * `searchFrom` on (test/mutants/mutants.ts), the first seed that caught the mutant when it was last
 * searched from the suite's first seed.
 *
 * Searching from the first seed every time would run seeds the product's own simulation tests run
 * anyway (slot-release-resent is first caught by seed 601 of the plan simulation's 2 000, about two
 * minutes). If the simulation changes and that seed no longer catches the mutant, the search goes on
 * to the suite's last seed, so a self-test still fails only when none of the suite's seeds catches it.
 * `MUTANT_SEARCH_FROM=1 npx vitest run --project 'mutant:*'` searches from seed 1 and prints, per
 * mutant, the seed to record.
 */
import { MUTANTS } from './mutants.js';

export function searchSeeds(mutant: string, suiteSeeds: readonly number[]): number[] {
  const override = process.env['MUTANT_SEARCH_FROM'];
  const from = override !== undefined && override !== '' ? Number(override) : (MUTANTS.find((candidate) => candidate.name === mutant)?.searchFrom ?? 1);
  return suiteSeeds.filter((seed) => seed >= from);
}
