/**
 * The mutant sub-plan-refill-keeps-half-built (test/mutants/mutants.ts) is found twice over: by the
 * plan simulation's dynamic seeds (sub-plan tasks under random crashes, lost replies and expiries:
 * invariant 9 sees a child's place run as two tasks), and by the sub-plan protocol's crash sweep
 * (test/subplan/sub-plan-crash-sweep.ts), which strikes every write of the check in turn and passes
 * on the product (test/subplan/sub-plan-crashes.test.ts).
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { MemoryProcess } from '../support/memory-plan.js';
import { subPlanCrashSweep } from '../subplan/sub-plan-crash-sweep.js';
import { MUTANTS } from './mutants.js';
import { expectDynamicSimulationCatches } from './plan-sim-catch.js';

const open: MemoryProcess[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map(({ zkPlan }) => zkPlan.close().catch(() => undefined)));
});

const DEFECT = MUTANTS.find((mutant) => mutant.name === 'sub-plan-refill-keeps-half-built')?.defect;

describe('mutant sub-plan-refill-keeps-half-built', () => {
  it(`the plan simulation's dynamic seeds find it: ${DEFECT ?? '?'}`, { timeout: 900_000 }, () =>
    expectDynamicSimulationCatches('sub-plan-refill-keeps-half-built'),
  );

  it(`the sub-plan crash sweep finds it: ${DEFECT ?? '?'}`, { timeout: 600_000 }, async () => {
    const caught = await subPlanCrashSweep(open).then(
      () => undefined,
      (error: unknown) => (error instanceof Error ? error.message : String(error)),
    );
    expect(caught, 'the sweep passed with the mutant in place').toBeDefined();
    // Caught by a check after a crash (the message names it), not by a fault of the sweep itself.
    expect(caught).toMatch(/^crash before write \d+ /);
    console.log(`sub-plan-refill-keeps-half-built: caught: ${caught?.split('\n')[0]}`);
  });
});
