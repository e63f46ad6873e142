/**
 * Which of a simulation's seeds a mutant's self-test runs: the suite's own seeds, from the mutant's
 * `searchFrom` on (test/mutants/mutants.ts), the first seed that caught the mutant when it was last
 * searched from the suite's first seed.
 *
 * Searching from the first seed every time would run seeds the product's own simulation tests run
 * anyway (slot-take-unfenced is first caught by seed 113 of the plan simulation's 2 000, some
 * seconds; a mutant first caught near the end would cost minutes). If the simulation changes and that seed no longer catches the mutant, the search goes on
 * to the suite's last seed, so a self-test still fails only when none of the suite's seeds catches it.
 * `MUTANT_SEARCH_FROM=1 npx vitest run --project 'mutant:*'` searches from seed 1 and prints, per
 * mutant, the seed to record. (The 'plan-stress' mutants run only their recorded seed unless
 * MUTANT_SEARCH_FROM is set: plan-sim-catch.ts says why.)
 */
import { expect } from 'vitest';
import { firstViolation } from '../sim-harness/seed-runner.js';
import type { SeedResult } from '../sim-harness/violation-report.js';
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

/**
 * The self-test of a mutant that one of the schedule or job simulations catches: the first of the
 * suite's seeds from the mutant's `searchFrom` on that breaks an invariant with the mutant in place.
 * `mode` names a variant of the simulation in what it prints (the schedule simulation's overlap).
 */
export async function expectSearchCatches(
  mutant: string,
  suiteSeeds: readonly number[],
  run: (seed: number) => Promise<SeedResult>,
  mode?: string,
): Promise<void> {
  const seeds = searchSeeds(mutant, suiteSeeds);
  const caught = await firstViolation(seeds, run);
  if (caught === undefined)
    expect.fail(
      `no seed of ${seeds[0]}…${seeds.at(-1)}${mode === undefined ? '' : ` (${mode})`} caught the mutant ${mutant}`,
    );
  console.log(
    `${mutant}: caught by seed ${caught.seed} (${mode === undefined ? '' : `${mode}, `}searched from seed ${seeds[0]}): ${caught.violation?.split('\n')[0]}`,
  );
}
