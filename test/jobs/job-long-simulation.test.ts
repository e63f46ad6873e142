/** The long-horizon job simulation (job-long-simulation.ts): hours of virtual time per seed, on fake timers. */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { firstViolation } from '../sim-harness/seed-runner.js';
import { FAKED_TIMERS } from '../sim-harness/simulated-clock.js';
import { reportViolation } from '../sim-harness/violation-report.js';
import { LONG_JOB_SEEDS, runLongJobSeed } from './job-long-simulation.js';

describe('job simulation over hours of virtual time', () => {
  beforeEach(() => vi.useFakeTimers({ toFake: [...FAKED_TIMERS] }));
  afterEach(() => vi.useRealTimers());

  it(
    `never two live workers on one item, and tokens only grow, over ${LONG_JOB_SEEDS.length} seeds of redefinitions, rotating pools, removals, every run mode, drifting clocks and faults`,
    { timeout: 900_000 },
    async () => {
      const failing = await firstViolation(LONG_JOB_SEEDS, (seed) => runLongJobSeed(seed));
      if (failing !== undefined)
        expect.fail(
          reportViolation(failing, {
            about: `${failing.simulatedHours.toFixed(1)} h simulated`,
            listName: 'events',
            list: failing.events,
            replay: `JOB_LONG_SIM_SEED=${failing.seed}`,
          }),
        );
    },
  );
});
