/**
 * The plan simulation's `stress` profile finds the mutant slot-release-resent (test/mutants/mutants.ts)
 * at the seed recorded for it. That seed passes without the mutant
 * (test/simulation/stress-baseline.test.ts, on the product in the project `simulations`), and this
 * test passes only if that same seed is the one that catches the mutant, so the catch is the
 * mutant's doing (plan-sim-catch.ts says more). Until 2026-11-28 the default profile caught it (seed
 * 735); since the finishing writes were pipelined, none of its 2 000 seeds does.
 */
import { describe, it } from 'vitest';
import { MUTANTS } from './mutants.js';
import { expectStressSeedCatches } from './plan-sim-catch.js';

describe('mutant slot-release-resent', () => {
  it(
    `the plan simulation's stress seeds find it: ${MUTANTS.find((mutant) => mutant.name === 'slot-release-resent')?.defect ?? '?'}`,
    { timeout: 600_000 },
    async () => {
      await expectStressSeedCatches('slot-release-resent');
    },
  );
});
