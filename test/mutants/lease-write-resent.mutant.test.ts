/** The long-horizon job simulation finds the mutant lease-write-resent (test/mutants/mutants.ts) within the suite's seeds. */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { LONG_JOB_FAKED_TIMERS, runLongJobSeed } from '../jobs/job-long-simulation.js';
import { LONG_JOB_SEEDS } from '../jobs/long-job-seeds.js';
import { MUTANTS } from './mutants.js';
import { searchSeeds } from './search-seeds.js';

describe('mutant lease-write-resent', () => {
  beforeEach(() => vi.useFakeTimers({ toFake: [...LONG_JOB_FAKED_TIMERS] }));
  afterEach(() => vi.useRealTimers());

  it(
    `the long job simulation finds it: ${MUTANTS.find((mutant) => mutant.name === 'lease-write-resent')?.defect ?? '?'}`,
    { timeout: 900_000 },
    async () => {
      const seeds = searchSeeds('lease-write-resent', LONG_JOB_SEEDS);
      for (const seed of seeds) {
        const result = await runLongJobSeed(seed);
        if (result.violation === undefined) continue;
        console.log(
          `lease-write-resent: caught by seed ${seed} (searched from seed ${seeds[0]}): ${result.violation.split('\n')[0]}`,
        );
        return;
      }
      expect.fail(
        `no seed of ${seeds[0]}…${LONG_JOB_SEEDS.length} caught the mutant lease-write-resent`,
      );
    },
  );
});
