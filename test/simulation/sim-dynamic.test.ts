/**
 * Seeded simulation of dynamic plans (the `dynamic` profile, workload.ts): tasks that spawn tasks
 * and hand over to their sum, skip, fail for good, and run under trigger rules, on the default
 * profile's cluster with its crashes, lost replies, expiries and control calls. Invariant 3 checks
 * every input against the outcome of its producer and the rule of the task; invariant 9, one task
 * per place of a spawn and one continuation per spawner, fed every child's result in order;
 * invariant 4, that every plan ends (no result lost). `SIM_DYNAMIC_SEEDS=<n>` runs n seeds,
 * `SIM_DYNAMIC_SEED=<n>` replays one.
 */
import { describe, expect, it } from 'vitest';
import { seedsFromEnv } from '../sim-harness/seed-runner.js';
import { DYNAMIC_SEEDS } from './dynamic-seeds.js';
import { firstViolation, report } from './seeds.js';

describe('seeded simulation of dynamic plans', () => {
  const seeds = seedsFromEnv('SIM_DYNAMIC', DYNAMIC_SEEDS);
  it(`keeps every invariant over ${seeds.length} seeds`, { timeout: 900_000 }, async () => {
    const failing = await firstViolation(seeds, 'dynamic');
    if (failing !== undefined)
      expect.fail(
        report(
          failing,
          `SIM_DYNAMIC_SEED=${failing.seed} npx vitest run test/simulation/sim-dynamic.test.ts`,
        ),
      );
  });
});
