/**
 * The seeded schedule simulation finds the mutant fire-tick-without-lock (test/mutants/mutants.ts)
 * within the suite's seeds with overlap 'allow'. Each of those seeds passes on the product in the
 * same mode (test/schedule/schedule-simulation.test.ts), so the catch is the mutant's doing
 * (schedule-sim-catch.ts).
 */
import { describe, it } from 'vitest';
import { MUTANTS } from './mutants.js';
import { expectScheduleSimulationCatches } from './schedule-sim-catch.js';

describe('mutant fire-tick-without-lock', () => {
  it(
    `the schedule simulation finds it: ${MUTANTS.find((mutant) => mutant.name === 'fire-tick-without-lock')?.defect ?? '?'}`,
    { timeout: 600_000 },
    async () => {
      await expectScheduleSimulationCatches('fire-tick-without-lock', { overlap: 'allow' });
    },
  );
});
