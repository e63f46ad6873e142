/**
 * Stress seeds that once broke an invariant on the product, replayed: each must keep every
 * invariant. Stress seed 1352: a worker whose reply to a slot take was lost (its session alive)
 * claimed a task of a plan that was then cancelled and deleted; back on line, it started the
 * function. performTask now looks at the plan again before the start when its view stopped
 * vouching: its control node, and whether it still exists (docs/design/plan-control.md).
 */
import { describe, expect, it } from 'vitest';
import { firstViolation, report } from './seeds.js';

const SEEDS = [1352];

describe('seeded simulation: stress seeds that once failed', () => {
  it(
    `keeps every invariant at stress seeds ${SEEDS.join(', ')}`,
    { timeout: 120_000 },
    async () => {
      const failing = await firstViolation(SEEDS, 'stress');
      if (failing !== undefined)
        expect.fail(
          report(
            failing,
            'npx vitest run --project simulations test/simulation/stress-regressions.test.ts',
          ),
        );
    },
  );
});
