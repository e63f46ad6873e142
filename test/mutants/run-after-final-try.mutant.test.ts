/**
 * The plan simulation's `dynamic` profile finds the mutant run-after-final-try (test/mutants/mutants.ts): the
 * first of its seeds from the recorded one on that breaks an invariant with the mutant in place.
 * test/simulation/sim-dynamic.test.ts runs those seeds on the product, so the catch is the mutant's
 * doing (plan-sim-catch.ts says more).
 */
import { describe, it } from 'vitest';
import { MUTANTS } from './mutants.js';
import { expectDynamicSimulationCatches } from './plan-sim-catch.js';

describe('mutant run-after-final-try', () => {
  it(
    `the plan simulation's dynamic seeds find it: ${MUTANTS.find((mutant) => mutant.name === 'run-after-final-try')?.defect ?? '?'}`,
    { timeout: 600_000 },
    async () => {
      await expectDynamicSimulationCatches('run-after-final-try');
    },
  );
});
