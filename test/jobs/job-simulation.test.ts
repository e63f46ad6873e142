/**
 * The seeded job simulation (job-simulation.ts) over many seeds. These are the seeds the self-tests
 * of its mutants search (test/mutants/job-sim-catch.ts): every one passes here on the product, so a
 * violation there is the mutant's doing.
 */
import { describe, expect, it } from 'vitest';
import { firstViolation } from '../sim-harness/seed-runner.js';
import { reportViolation } from '../sim-harness/violation-report.js';
import { JOB_SEEDS, runJobSeed } from './job-simulation.js';

describe('job simulation', () => {
  it(
    `never has two live holders working on one item over ${JOB_SEEDS.length} seeds of crashes, detaches, blips, lost replies, clock moves, stops, new workers, pool changes and workers disabled and enabled`,
    { timeout: 900_000 },
    async () => {
      const failing = await firstViolation(JOB_SEEDS, runJobSeed);
      if (failing !== undefined)
        expect.fail(
          reportViolation(failing, {
            listName: 'faults',
            list: failing.faults,
            replay: `JOB_SIM_SEED=${failing.seed}`,
          }),
        );
    },
  );
});
