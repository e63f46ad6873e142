/**
 * Which of a simulation's seeds a mutant's self-test runs: the suite's own seeds, from the mutant's
 * `searchFrom` on (test/mutants/mutants.ts), the first seed that caught the mutant when it was last
 * searched from the suite's first seed.
 *
 * Searching from the first seed every time would run seeds the product's own simulation tests run
 * anyway (slot-release-resent is first caught by seed 735 of the plan simulation's 2 000, about
 * two and a half minutes). If the simulation changes and that seed no longer catches the mutant, the search goes on
 * to the suite's last seed, so a self-test still fails only when none of the suite's seeds catches it.
 * `MUTANT_SEARCH_FROM=1 npx vitest run --project 'mutant:*'` searches from seed 1 and prints, per
 * mutant, the seed to record. (The 'plan-stress' mutants run only their recorded seed unless
 * MUTANT_SEARCH_FROM is set: plan-sim-catch.ts says why.)
 */
import { MUTANTS } from './mutants.js';

/** The seed MUTANT_SEARCH_FROM names, when it is set: a search anew from that seed, whatever was recorded. */
export function searchOverride(): number | undefined {
  const override = process.env['MUTANT_SEARCH_FROM'];
  return override !== undefined && override !== '' ? Number(override) : undefined;
}

export function searchSeeds(mutant: string, suiteSeeds: readonly number[]): number[] {
  const from =
    searchOverride() ?? MUTANTS.find((candidate) => candidate.name === mutant)?.searchFrom ?? 1;
  return suiteSeeds.filter((seed) => seed >= from);
}
