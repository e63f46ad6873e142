/**
 * The seeded job simulation finds the mutant assign-disabled-worker (test/mutants/mutants.ts)
 * within the suite's seeds: once settled, a disabled worker is assigned items and works on them.
 * Each of those seeds passes on the product (test/jobs/job-simulation.test.ts), so the catch is the
 * mutant's doing (job-sim-catch.ts).
 */
import { describe, it } from 'vitest';
import { MUTANTS } from './mutants.js';
import { expectJobSimulationCatches } from './job-sim-catch.js';

describe('mutant assign-disabled-worker', () => {
  it(
    `the job simulation finds it: ${MUTANTS.find((mutant) => mutant.name === 'assign-disabled-worker')?.defect ?? '?'}`,
    { timeout: 900_000 },
    async () => {
      await expectJobSimulationCatches('assign-disabled-worker');
    },
  );
});
