/** The long-horizon schedule simulation (schedule-long-simulation.ts): hours of virtual time per seed. */
import { describe, expect, it } from 'vitest';
import { firstViolation } from '../sim-harness/seed-runner.js';
import { reportViolation } from '../sim-harness/violation-report.js';
import { LONG_SCHEDULE_SEEDS, runLongScheduleSeed } from './schedule-long-simulation.js';

describe('schedule simulation over hours of virtual time', () => {
  it(
    `no plan made twice, no final tick record changed or made again, none left pending, over ${LONG_SCHEDULE_SEEDS.length} seeds of edits, pauses, removals, outages and faults`,
    { timeout: 900_000 },
    async () => {
      const failing = await firstViolation(LONG_SCHEDULE_SEEDS, (seed) =>
        runLongScheduleSeed(seed),
      );
      if (failing !== undefined)
        expect.fail(
          reportViolation(failing, {
            about: `${failing.simulatedHours.toFixed(1)} h simulated`,
            listName: 'events',
            list: failing.events,
            replay: `SCHEDULE_LONG_SIM_SEED=${failing.seed}`,
          }),
        );
    },
  );
});
