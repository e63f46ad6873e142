/**
 * The failure hand-on's crash sweep (test/trigger/failure-crash-sweep.ts) finds the mutant
 * hand-on-failure-after-mark (test/mutants/mutants.ts). Random faults of the plan simulation hardly
 * ever strike in its window (none of 2 665 dynamic seeds did), so its self-test is the sweep that
 * test/trigger/trigger-crashes.test.ts runs on the product, where it passes: here a crash between
 * the failed mark and the hand-on must leave a clean-up that never gets its input.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { MemoryProcess } from '../support/memory-plan.js';
import { failureCrashSweep } from '../trigger/failure-crash-sweep.js';
import { MUTANTS } from './mutants.js';

const open: MemoryProcess[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map(({ zkPlan }) => zkPlan.close().catch(() => undefined)));
});

describe('mutant hand-on-failure-after-mark', () => {
  it(
    `the failure hand-on's crash sweep finds it: ${MUTANTS.find((mutant) => mutant.name === 'hand-on-failure-after-mark')?.defect ?? '?'}`,
    { timeout: 600_000 },
    async () => {
      const caught = await failureCrashSweep(open).then(
        () => undefined,
        (error: unknown) => (error instanceof Error ? error.message : String(error)),
      );
      expect(caught, 'the sweep passed with the mutant in place').toBeDefined();
      // Caught by a check after a crash (the message names it), not by a fault of the sweep itself.
      expect(caught).toMatch(/^crash before write \d+ /);
      console.log(`hand-on-failure-after-mark: caught: ${caught?.split('\n')[0]}`);
    },
  );
});
