/**
 * Seeded simulation of cancels under faults (the `cancel` profile, workload.ts): every plan is
 * cancelled while its tasks run, on the default profile's cluster with its crashes, lost replies,
 * expiries and control calls, and around each cancel a worker process that runs one of the plan's
 * tasks is killed right before it, killed or its session expired right after its control record
 * lands, or frozen so that its session expires while the cancel runs; now and then the cancel is
 * sent by a process that dies right after its control record lands, and is called again by the
 * plan's writer. Invariant 10 checks every task's history record: one each, written once, and
 * "cancelled, was running" on its worker for a task whose function was running under a live session
 * when the cancel landed. `SIM_CANCEL_SEEDS=<n>` runs n seeds, `SIM_CANCEL_SEED=<n>` replays one.
 */
import { describe, expect, it } from 'vitest';
import { seedsFromEnv } from '../sim-harness/seed-runner.js';
import { firstViolation, report } from './seeds.js';

/** About 20 s in all on a loaded 2-core machine. */
const CANCEL_SEEDS = 300;

describe('seeded simulation of cancels under faults', () => {
  const seeds = seedsFromEnv('SIM_CANCEL', CANCEL_SEEDS);
  it(`keeps every invariant over ${seeds.length} seeds`, { timeout: 600_000 }, async () => {
    const failing = await firstViolation(seeds, 'cancel');
    if (failing !== undefined)
      expect.fail(
        report(
          failing,
          `SIM_CANCEL_SEED=${failing.seed} npx vitest run --project simulations test/simulation/sim-cancel.test.ts`,
        ),
      );
  });
});
