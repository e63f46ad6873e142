/**
 * The sub-plan protocol's crash sweep (test/subplan/sub-plan-crash-sweep.ts) finds the mutant
 * sub-plan-refill-keeps-half-built (test/mutants/mutants.ts). A crash after some of the child's tasks
 * were made and before its `ready` is a window of a few writes, so the self-test is the sweep that
 * test/subplan/sub-plan-crashes.test.ts runs on the product, where it passes: here a crash in that
 * window must leave a child whose tasks run twice.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { MemoryProcess } from '../support/memory-plan.js';
import { subPlanCrashSweep } from '../subplan/sub-plan-crash-sweep.js';
import { MUTANTS } from './mutants.js';

const open: MemoryProcess[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map(({ zkPlan }) => zkPlan.close().catch(() => undefined)));
});

describe('mutant sub-plan-refill-keeps-half-built', () => {
  it(
    `the sub-plan crash sweep finds it: ${MUTANTS.find((mutant) => mutant.name === 'sub-plan-refill-keeps-half-built')?.defect ?? '?'}`,
    { timeout: 600_000 },
    async () => {
      const caught = await subPlanCrashSweep(open).then(
        () => undefined,
        (error: unknown) => (error instanceof Error ? error.message : String(error)),
      );
      expect(caught, 'the sweep passed with the mutant in place').toBeDefined();
      // Caught by a check after a crash (the message names it), not by a fault of the sweep itself.
      expect(caught).toMatch(/^crash before write \d+ /);
      console.log(`sub-plan-refill-keeps-half-built: caught: ${caught?.split('\n')[0]}`);
    },
  );
});
