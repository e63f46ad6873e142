/**
 * The self-tests of the mutants the seeded job simulation (test/jobs) catches: the first of the
 * suite's own seeds (JOB_SEEDS), from the mutant's `searchFrom` on (search-seeds.ts), that finds a
 * violation with the mutant in place. test/jobs/job-simulation.test.ts runs each of those seeds on the
 * product as it is and expects them all to pass, in every suite run, so a violation here is the
 * mutant's doing.
 */
import { JOB_SEEDS, runJobSeed } from '../jobs/job-simulation.js';
import { expectSearchCatches } from './search-seeds.js';

export async function expectJobSimulationCatches(mutant: string): Promise<void> {
  await expectSearchCatches(mutant, JOB_SEEDS, runJobSeed);
}
