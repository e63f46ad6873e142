/**
 * The half of the 'plan-stress' mutants' self-tests that needs the product as it is (the project
 * `simulations` holds no mutant): each such mutant's recorded stress seed (`searchFrom` in
 * test/mutants/mutants.ts) passes without it. Its self-test (test/mutants/plan-sim-catch.ts) passes
 * only when that same seed catches the mutant, so the two together show one seed that violates an
 * invariant with the mutant and none without it: the catch is the mutant's doing, not one of the
 * product's own problems. The list comes from mutants.ts, so a new stress mutant cannot skip this.
 */
import { describe, expect, it } from 'vitest';
import { MUTANTS } from '../mutants/mutants.js';
import { firstViolation, report } from './seeds.js';

const STRESS_MUTANTS = MUTANTS.filter((mutant) => mutant.simulation === 'plan-stress');

describe('seeded simulation: the stress seeds recorded for the mutants pass on the product', () => {
  it.each(STRESS_MUTANTS.map((mutant) => [mutant.searchFrom, mutant.name] as const))(
    'stress seed %i (recorded for the mutant %s)',
    async (seed, name) => {
      const failing = await firstViolation([seed], 'stress');
      if (failing !== undefined)
        expect.fail(
          `stress seed ${seed}, recorded for the mutant ${name}, fails without the mutant too, so its catch proves nothing. Either the product ` +
            `has a defect this seed finds, or the seed must change: search on with MUTANT_SEARCH_FROM=${seed + 1} npx vitest run --project 'mutant:${name}', ` +
            `record the seed it names in test/mutants/mutants.ts, and run this test again.\n` +
            report(
              failing,
              'npx vitest run --project simulations test/simulation/stress-baseline.test.ts',
            ),
        );
    },
  );
});
