/**
 * The seeded job simulation finds the mutant take-before-lease-ends (test/mutants/mutants.ts)
 * within the suite's seeds. Each of those seeds passes on the product
 * (test/jobs/job-simulation.test.ts), so the catch is the mutant's doing (job-sim-catch.ts).
 */
import { describe, it } from 'vitest';
import { MUTANTS } from './mutants.js';
import { expectJobSimulationCatches } from './job-sim-catch.js';

describe('mutant take-before-lease-ends', () => {
  it(
    `the job simulation finds it: ${MUTANTS.find((mutant) => mutant.name === 'take-before-lease-ends')?.defect ?? '?'}`,
    { timeout: 900_000 },
    async () => {
      await expectJobSimulationCatches('take-before-lease-ends');
    },
  );
});
