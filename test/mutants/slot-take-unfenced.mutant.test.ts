/** The plan simulation finds the mutant slot-take-unfenced (test/mutants/mutants.ts) within the suite's seeds. */
import { describe, it } from 'vitest';
import { MUTANTS } from './mutants.js';
import { expectPlanSimulationCatches } from './plan-sim-catch.js';

describe('mutant slot-take-unfenced', () => {
  it(
    `the plan simulation finds it: ${MUTANTS.find((mutant) => mutant.name === 'slot-take-unfenced')?.defect ?? '?'}`,
    { timeout: 600_000 },
    async () => {
      await expectPlanSimulationCatches('slot-take-unfenced');
    },
  );
});
