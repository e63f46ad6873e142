/** The long-horizon job simulation (job-long-simulation.ts): hours of virtual time per seed, on fake timers. */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { LONG_JOB_FAKED_TIMERS, runLongJobSeed } from './job-long-simulation.js';
import { LONG_JOB_SEEDS } from './long-job-seeds.js';

describe('job simulation over hours of virtual time', () => {
  beforeEach(() => vi.useFakeTimers({ toFake: [...LONG_JOB_FAKED_TIMERS] }));
  afterEach(() => vi.useRealTimers());

  it(
    `never two live workers on one item, and tokens only grow, over ${LONG_JOB_SEEDS.length} seeds of redefinitions, rotating pools, removals, every run mode, drifting clocks and faults`,
    { timeout: 900_000 },
    async () => {
      for (const seed of LONG_JOB_SEEDS) {
        const result = await runLongJobSeed(seed);
        if (result.violation !== undefined)
          expect.fail(
            `seed ${seed} (${result.simulatedHours.toFixed(1)} h simulated): ${result.violation}\nevents: ${result.events.join('; ')}\nreplay: JOB_LONG_SIM_SEED=${seed}`,
          );
      }
    },
  );
});
