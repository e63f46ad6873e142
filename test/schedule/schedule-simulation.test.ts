/** The seeded schedule simulation (schedule-simulation.ts), with overlap 'allow' and with 'skip', and its self-test with each schedule defect put back. */
import { afterEach, describe, expect, it } from 'vitest';
import { reintroducedScheduleDefects } from '../../src/store/reintroduced-defects.js';
import { runScheduleSeed, type ScheduleSimOptions, type ScheduleSimResult } from './schedule-simulation.js';

const SEEDS = Number(process.env['SCHEDULE_SIM_SEEDS'] ?? 400);
type Defect = keyof typeof reintroducedScheduleDefects;

function report(result: ScheduleSimResult): string {
  return `seed ${result.seed}: ${result.violation}\nfaults: ${result.faults.join('; ')}\nreplay: SCHEDULE_SIM_SEED=${result.seed}`;
}

async function firstViolation(seeds: readonly number[], options?: ScheduleSimOptions): Promise<ScheduleSimResult | undefined> {
  for (const seed of seeds) {
    const result = await runScheduleSeed(seed, options);
    if (result.violation !== undefined) return result;
  }
  return undefined;
}

const only = process.env['SCHEDULE_SIM_SEED'];
const seeds = only ? [Number(only)] : Array.from({ length: SEEDS }, (_, index) => index + 1);
const skipSeeds = only ? seeds : seeds.slice(0, Number(process.env['SCHEDULE_SIM_SKIP_SEEDS'] ?? 150));
/** The schedules each defect shows in: the overlap defect only where runs are skipped and triggered by hand. */
const modeFor = (defect: Defect): ScheduleSimOptions => ({ overlap: defect === 'overlapNewestRunOnly' ? 'skip' : 'allow' });

describe('schedule simulation', () => {
  afterEach(() => {
    for (const defect of Object.keys(reintroducedScheduleDefects) as Defect[]) reintroducedScheduleDefects[defect] = false;
  });

  it(`keeps one whole plan per tick over ${seeds.length} seeds of crashes, freezes, lost replies and clock jumps`, { timeout: 600_000 }, async () => {
    const failing = await firstViolation(seeds);
    if (failing !== undefined) expect.fail(report(failing));
  });

  it(
    `with overlap 'skip', manual triggers and runs that end: never a cron run beside an unfinished earlier run, over ${skipSeeds.length} seeds`,
    { timeout: 600_000 },
    async () => {
      const failing = await firstViolation(skipSeeds, { overlap: 'skip' });
      if (failing !== undefined) expect.fail(report(failing));
    },
  );

  it.each(Object.keys(reintroducedScheduleDefects) as Defect[])('finds the reintroduced defect %s', { timeout: 600_000 }, async (defect) => {
    reintroducedScheduleDefects[defect] = true;
    const mode = modeFor(defect);
    const caught = await firstViolation(mode.overlap === 'skip' ? skipSeeds : seeds, mode);
    expect(caught, `no seed caught ${defect}`).toBeDefined();
    console.log(`${defect}: caught by seed ${caught?.seed}: ${caught?.violation?.split('\n')[0]}`);
  });
});
