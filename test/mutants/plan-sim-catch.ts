/**
 * The self-tests of the mutants the plan simulation (test/simulation) catches.
 *
 * 'plan' mutants (mutants.ts, `simulation`): the first of the suite's own seeds (from the mutant's
 * `searchFrom` on, see search-seeds.ts) that finds a violation with the mutant in place. Those seeds
 * all pass on the product as it is (test/simulation/sim-*.test.ts), so a violation here is the
 * mutant's doing.
 *
 * 'plan-stress' mutants: defects whose damage needs two faults in a row, which the default profile
 * rarely draws, so they are caught with the `stress` profile (workload.ts). No test runs every stress
 * seed on the product, and a mutant's project cannot load the unmutated product beside the mutant
 * (the plugin patches the one module graph), so a stress violation alone could be one of the
 * product's own. The proof is split in two instead: test/simulation/stress-baseline.test.ts, in the
 * project `simulations` (the product unmutated), runs each such mutant's recorded seed (`searchFrom`)
 * and expects it to pass; and the self-test here passes only when that very seed catches the mutant.
 * Both run in every suite run, so together they show, for one seed, a violation with the mutant and
 * none without it: what the switches' self-test once checked in one process.
 *
 * So the self-test runs the recorded seed alone. Going on to later seeds when it no longer catches the
 * mutant could only end in a failure (a later seed's run without the mutant is unknown), and could
 * take the rest of the 2 000 seeds, about a second each under stress: longer than the test's timeout.
 * It fails at once instead, saying how to search again: with MUTANT_SEARCH_FROM set, the search runs
 * from that seed on and fails naming the first seed that catches the mutant, unless it is the
 * recorded one.
 */
import { expect } from 'vitest';
import { DEFAULT_SEEDS, firstViolation } from '../simulation/seeds.js';
import { DYNAMIC_SEEDS } from '../simulation/dynamic-seeds.js';
import { MUTANTS } from './mutants.js';
import { searchOverride, searchSeeds } from './search-seeds.js';

const SUITE_SEEDS = Array.from({ length: DEFAULT_SEEDS }, (_, index) => index + 1);

export async function expectPlanSimulationCatches(mutant: string): Promise<void> {
  const seeds = searchSeeds(mutant, SUITE_SEEDS);
  const caught = await firstViolation(seeds);
  expect(
    caught,
    `no seed of ${seeds[0]}…${DEFAULT_SEEDS} caught the mutant ${mutant}`,
  ).toBeDefined();
  console.log(
    `${mutant}: caught by seed ${caught?.seed} (searched from seed ${seeds[0]}): ${caught?.violation?.split('\n')[0]}`,
  );
}

export async function expectStressSeedCatches(mutant: string): Promise<void> {
  const recorded = MUTANTS.find((candidate) => candidate.name === mutant)?.searchFrom;
  if (recorded === undefined) expect.fail(`no mutant ${mutant} in test/mutants/mutants.ts`);
  const from = searchOverride();
  const seeds = from === undefined ? [recorded] : SUITE_SEEDS.filter((seed) => seed >= from);
  const caught = await firstViolation(seeds, 'stress');
  if (caught === undefined)
    expect.fail(
      from === undefined
        ? `stress seed ${recorded}, recorded for the mutant ${mutant}, no longer catches it (the simulation or the product changed). ` +
            `Search again with MUTANT_SEARCH_FROM=1 npx vitest run --project 'mutant:${mutant}': it names the seed to record.`
        : `no stress seed of ${from}…${DEFAULT_SEEDS} caught the mutant ${mutant}`,
    );
  console.log(
    `${mutant}: caught by stress seed ${caught.seed} (searched from seed ${seeds[0]}): ${caught.violation?.split('\n')[0]}`,
  );
  if (caught.seed !== recorded)
    expect.fail(
      `the mutant ${mutant} is caught by stress seed ${caught.seed}, not by its recorded seed ${recorded}, and only the recorded seed is known ` +
        `to pass without it. Record searchFrom: ${caught.seed} for it in test/mutants/mutants.ts, then run ` +
        `npx vitest run --project simulations test/simulation/stress-baseline.test.ts; if that seed fails there too, it proves nothing: ` +
        `search on with MUTANT_SEARCH_FROM=${caught.seed + 1} npx vitest run --project 'mutant:${mutant}' and record the seed it names.`,
    );
}

/**
 * 'plan-dynamic' mutants: the first seed of the `dynamic` profile (from the mutant's `searchFrom` on)
 * that finds a violation with the mutant in place. test/simulation/sim-dynamic.test.ts runs all of
 * those seeds on the product, so a violation here is the mutant's doing.
 */
export async function expectDynamicSimulationCatches(mutant: string): Promise<void> {
  const seeds = searchSeeds(
    mutant,
    Array.from({ length: DYNAMIC_SEEDS }, (_, index) => index + 1),
  );
  const caught = await firstViolation(seeds, 'dynamic');
  expect(
    caught,
    `no dynamic seed of ${seeds[0]}…${DYNAMIC_SEEDS} caught the mutant ${mutant}`,
  ).toBeDefined();
  console.log(
    `${mutant}: caught by dynamic seed ${caught?.seed} (searched from seed ${seeds[0]}): ${caught?.violation?.split('\n')[0]}`,
  );
}
