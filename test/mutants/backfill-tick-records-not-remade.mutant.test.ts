/**
 * The seeded schedule simulation finds the mutant backfill-tick-records-not-remade (test/mutants/mutants.ts)
 * within the suite's seeds with overlap 'allow'. Each of those seeds passes on the product in the
 * same mode (test/schedule/schedule-simulation.test.ts), so the catch is the mutant's doing
 * (schedule-sim-catch.ts).
 */
import { describe, it } from 'vitest';
import { MUTANTS } from './mutants.js';
import { expectScheduleSimulationCatches } from './schedule-sim-catch.js';

describe('mutant backfill-tick-records-not-remade', () => {
  it(
    `the schedule simulation finds it: ${MUTANTS.find((mutant) => mutant.name === 'backfill-tick-records-not-remade')?.defect ?? '?'}`,
    { timeout: 600_000 },
    async () => {
      await expectScheduleSimulationCatches('backfill-tick-records-not-remade', {
        overlap: 'allow',
      });
    },
  );
});
