/** The plan simulation finds the mutant slot-release-resent (test/mutants/mutants.ts) within the suite's seeds. */
import { describe, it } from 'vitest';
import { MUTANTS } from './mutants.js';
import { expectPlanSimulationCatches } from './plan-sim-catch.js';

describe('mutant slot-release-resent', () => {
  it(
    `the plan simulation finds it: ${MUTANTS.find((mutant) => mutant.name === 'slot-release-resent')?.defect ?? '?'}`,
    { timeout: 600_000 },
    async () => {
      await expectPlanSimulationCatches('slot-release-resent');
    },
  );
});
