/** The long-horizon schedule simulation (schedule-long-simulation.ts): hours of virtual time per seed. */
import { describe, expect, it } from 'vitest';
import { LONG_SCHEDULE_SEEDS } from './long-schedule-seeds.js';
import { runLongScheduleSeed, type LongScheduleSimResult } from './schedule-long-simulation.js';

function reportLong(result: LongScheduleSimResult): string {
  return `seed ${result.seed} (${result.simulatedHours.toFixed(1)} h simulated): ${result.violation}\nevents: ${result.events.join('; ')}\nreplay: SCHEDULE_LONG_SIM_SEED=${result.seed}`;
}

describe('schedule simulation over hours of virtual time', () => {
  it(
    `no plan made twice, no final tick record changed or made again, none left pending, over ${LONG_SCHEDULE_SEEDS.length} seeds of edits, pauses, removals, outages and faults`,
    { timeout: 900_000 },
    async () => {
      for (const seed of LONG_SCHEDULE_SEEDS) {
        const result = await runLongScheduleSeed(seed);
        if (result.violation !== undefined) expect.fail(reportLong(result));
      }
    },
  );
});
