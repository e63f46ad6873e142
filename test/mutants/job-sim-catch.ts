/**
 * The self-tests of the mutants the seeded job simulation (test/jobs) catches: the first of the
 * suite's own seeds (JOB_SEEDS), from the mutant's `searchFrom` on (search-seeds.ts), that finds a
 * violation with the mutant in place. test/jobs/job-simulation.test.ts runs each of those seeds on the
 * product as it is and expects them all to pass, in every suite run, so a violation here is the
 * mutant's doing.
 */
import { expect } from 'vitest';
import { JOB_SEEDS } from '../jobs/job-seeds.js';
import { runJobSeed } from '../jobs/job-simulation.js';
import { searchSeeds } from './search-seeds.js';

export async function expectJobSimulationCatches(mutant: string): Promise<void> {
  const seeds = searchSeeds(mutant, JOB_SEEDS);
  for (const seed of seeds) {
    const result = await runJobSeed(seed);
    if (result.violation === undefined) continue;
    console.log(
      `${mutant}: caught by seed ${seed} (searched from seed ${seeds[0]}): ${result.violation.split('\n')[0]}`,
    );
    return;
  }
  expect.fail(`no seed of ${seeds[0]}…${seeds.at(-1)} caught the mutant ${mutant}`);
}
