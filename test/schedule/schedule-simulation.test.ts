/**
 * The seeded schedule simulation (schedule-simulation.ts), with overlap 'allow' and with 'skip'. These
 * are the seeds the self-tests of its mutants search (test/mutants/schedule-sim-catch.ts): every one
 * passes here on the product, so a violation there is the mutant's doing.
 */
import { describe, expect, it } from 'vitest';
import { firstViolation } from '../sim-harness/seed-runner.js';
import { reportViolation } from '../sim-harness/violation-report.js';
import {
  SCHEDULE_SEEDS,
  SCHEDULE_SKIP_SEEDS,
  runScheduleSeed,
  type ScheduleSimResult,
} from './schedule-simulation.js';

function report(result: ScheduleSimResult): string {
  return reportViolation(result, {
    listName: 'faults',
    list: result.faults,
    replay: `SCHEDULE_SIM_SEED=${result.seed}`,
  });
}

describe('schedule simulation', () => {
  it(
    `keeps one whole plan per tick over ${SCHEDULE_SEEDS.length} seeds of crashes, freezes, lost replies and clock jumps`,
    { timeout: 600_000 },
    async () => {
      const failing = await firstViolation(SCHEDULE_SEEDS, (seed) => runScheduleSeed(seed));
      if (failing !== undefined) expect.fail(report(failing));
    },
  );

  it(
    `with overlap 'skip', manual triggers and runs that end: never a cron run beside an unfinished earlier run, over ${SCHEDULE_SKIP_SEEDS.length} seeds`,
    { timeout: 600_000 },
    async () => {
      const failing = await firstViolation(SCHEDULE_SKIP_SEEDS, (seed) =>
        runScheduleSeed(seed, { overlap: 'skip' }),
      );
      if (failing !== undefined) expect.fail(report(failing));
    },
  );
});
