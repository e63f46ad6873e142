/** The long-horizon job simulation finds the mutant misfire-catch-up-dropped (test/mutants/mutants.ts) within the suite's seeds. */
import { afterEach, beforeEach, describe, it, vi } from 'vitest';
import { LONG_JOB_SEEDS, runLongJobSeed } from '../jobs/job-long-simulation.js';
import { FAKED_TIMERS } from '../sim-harness/simulated-clock.js';
import { MUTANTS } from './mutants.js';
import { expectSearchCatches } from './search-seeds.js';

describe('mutant misfire-catch-up-dropped', () => {
  beforeEach(() => vi.useFakeTimers({ toFake: [...FAKED_TIMERS] }));
  afterEach(() => vi.useRealTimers());

  it(
    `the long job simulation finds it: ${MUTANTS.find((mutant) => mutant.name === 'misfire-catch-up-dropped')?.defect ?? '?'}`,
    { timeout: 900_000 },
    () =>
      expectSearchCatches('misfire-catch-up-dropped', LONG_JOB_SEEDS, (seed) =>
        runLongJobSeed(seed),
      ),
  );
});
