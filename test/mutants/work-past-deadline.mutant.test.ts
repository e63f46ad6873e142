/**
 * The seeded job simulation finds the mutant work-past-deadline (test/mutants/mutants.ts) within
 * the suite's seeds. Each of those seeds passes on the product (test/jobs/job-simulation.test.ts),
 * so the catch is the mutant's doing (job-sim-catch.ts).
 */
import { describe, it } from 'vitest';
import { MUTANTS } from './mutants.js';
import { expectJobSimulationCatches } from './job-sim-catch.js';

describe('mutant work-past-deadline', () => {
  it(
    `the job simulation finds it: ${MUTANTS.find((mutant) => mutant.name === 'work-past-deadline')?.defect ?? '?'}`,
    { timeout: 900_000 },
    async () => {
      await expectJobSimulationCatches('work-past-deadline');
    },
  );
});
