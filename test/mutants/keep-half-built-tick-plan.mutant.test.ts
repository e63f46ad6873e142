/**
 * The seeded schedule simulation finds the mutant keep-half-built-tick-plan
 * (test/mutants/mutants.ts) within the suite's seeds with overlap 'allow'. Each of those seeds
 * passes on the product in the same mode (test/schedule/schedule-simulation.test.ts), so the catch
 * is the mutant's doing (schedule-sim-catch.ts).
 */
import { describe, it } from 'vitest';
import { MUTANTS } from './mutants.js';
import { expectScheduleSimulationCatches } from './schedule-sim-catch.js';

describe('mutant keep-half-built-tick-plan', () => {
  it(
    `the schedule simulation finds it: ${MUTANTS.find((mutant) => mutant.name === 'keep-half-built-tick-plan')?.defect ?? '?'}`,
    { timeout: 600_000 },
    async () => {
      await expectScheduleSimulationCatches('keep-half-built-tick-plan', { overlap: 'allow' });
    },
  );
});
