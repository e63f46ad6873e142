/**
 * The plan simulation's `stress` profile finds the mutant trust-stale-control-view
 * (test/mutants/mutants.ts) at the seed recorded for it. That seed passes without the mutant
 * (test/simulation/stress-baseline.test.ts, on the product in the project `simulations`), and this
 * test passes only if that same seed is the one that catches the mutant, so the catch is the
 * mutant's doing (plan-sim-catch.ts says more).
 */
import { describe, it } from 'vitest';
import { MUTANTS } from './mutants.js';
import { expectStressSeedCatches } from './plan-sim-catch.js';

describe('mutant trust-stale-control-view', () => {
  it(
    `the plan simulation's stress seeds find it: ${MUTANTS.find((mutant) => mutant.name === 'trust-stale-control-view')?.defect ?? '?'}`,
    { timeout: 600_000 },
    async () => {
      await expectStressSeedCatches('trust-stale-control-view');
    },
  );
});
