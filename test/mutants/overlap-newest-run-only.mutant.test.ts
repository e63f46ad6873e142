/**
 * The seeded schedule simulation finds the mutant overlap-newest-run-only (test/mutants/mutants.ts)
 * within the suite's seeds with overlap 'skip'. Each of those seeds passes on the product in the
 * same mode (test/schedule/schedule-simulation.test.ts), so the catch is the mutant's doing
 * (schedule-sim-catch.ts).
 */
import { describe, it } from 'vitest';
import { MUTANTS } from './mutants.js';
import { expectScheduleSimulationCatches } from './schedule-sim-catch.js';

describe('mutant overlap-newest-run-only', () => {
  it(
    `the schedule simulation finds it: ${MUTANTS.find((mutant) => mutant.name === 'overlap-newest-run-only')?.defect ?? '?'}`,
    { timeout: 600_000 },
    async () => {
      await expectScheduleSimulationCatches('overlap-newest-run-only', { overlap: 'skip' });
    },
  );
});
