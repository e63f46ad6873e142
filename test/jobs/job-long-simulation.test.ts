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
    `never two live workers (or two runs) on one item, tokens only grow, a tick a run overran is caught up, and a run whose holder crashed fails over, over ${LONG_JOB_SEEDS.length} seeds of redefinitions, rotating pools, removals, every run mode, drifting clocks and faults`,
    { timeout: 900_000 },
    async () => {
      const checked = { catchUps: 0, failovers: 0 };
      const failing = await firstViolation(LONG_JOB_SEEDS, async (seed) => {
        const result = await runLongJobSeed(seed);
        checked.catchUps += result.checked.catchUps;
        checked.failovers += result.checked.failovers;
        return result;
      });
      if (failing !== undefined)
        expect.fail(
          reportViolation(failing, {
            about: `${failing.simulatedHours.toFixed(1)} h simulated`,
            listName: 'events',
            list: failing.events,
            replay: `JOB_LONG_SIM_SEED=${failing.seed}`,
          }),
        );
      console.log(
        `job long simulation: ${checked.catchUps} catch-ups and ${checked.failovers} failovers checked over ${LONG_JOB_SEEDS.length} seeds`,
      );
      // The timing checks apply only where nothing blurs them: over the default seeds, both must have applied.
      if (LONG_JOB_SEEDS.length >= 20) {
        expect(checked.catchUps).toBeGreaterThan(0);
        expect(checked.failovers).toBeGreaterThan(0);
      }
    },
  );
});
