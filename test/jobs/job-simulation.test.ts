/**
 * The seeded job simulation (job-simulation.ts) over many seeds. These are the seeds the self-tests
 * of its mutants search (test/mutants/job-sim-catch.ts): every one passes here on the product, so a
 * violation there is the mutant's doing.
 */
import { describe, expect, it } from 'vitest';
import { JOB_SEEDS } from './job-seeds.js';
import { runJobSeed, type JobSimResult } from './job-simulation.js';

function report(result: JobSimResult): string {
  return `seed ${result.seed}: ${result.violation}\nfaults: ${result.faults.join('; ')}\nreplay: JOB_SIM_SEED=${result.seed}`;
}

describe('job simulation', () => {
  it(
    `never has two live holders working on one item over ${JOB_SEEDS.length} seeds of crashes, detaches, blips, lost replies, clock moves, stops, new workers and pool changes`,
    { timeout: 900_000 },
    async () => {
      for (const seed of JOB_SEEDS) {
        const result = await runJobSeed(seed);
        if (result.violation !== undefined) expect.fail(report(result));
      }
    },
  );
});
