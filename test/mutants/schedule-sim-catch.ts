/**
 * The self-tests of the mutants the seeded schedule simulation (test/schedule) catches: the first of
 * the suite's own seeds, from the mutant's `searchFrom` on (search-seeds.ts), that finds a violation
 * with the mutant in place, with overlap 'allow' (SCHEDULE_SEEDS) or 'skip' (SCHEDULE_SKIP_SEEDS).
 * test/schedule/schedule-simulation.test.ts runs each of those seeds in the same mode on the product
 * as it is and expects them all to pass, in every suite run, so a violation here is the mutant's doing.
 */
import { expect } from 'vitest';
import { SCHEDULE_SEEDS, SCHEDULE_SKIP_SEEDS } from '../schedule/schedule-seeds.js';
import { runScheduleSeed, type ScheduleSimOptions } from '../schedule/schedule-simulation.js';
import { searchSeeds } from './search-seeds.js';

export async function expectScheduleSimulationCatches(
  mutant: string,
  options: ScheduleSimOptions,
): Promise<void> {
  const seeds = searchSeeds(
    mutant,
    options.overlap === 'skip' ? SCHEDULE_SKIP_SEEDS : SCHEDULE_SEEDS,
  );
  for (const seed of seeds) {
    const result = await runScheduleSeed(seed, options);
    if (result.violation === undefined) continue;
    console.log(
      `${mutant}: caught by seed ${seed} (overlap '${options.overlap}', searched from seed ${seeds[0]}): ${result.violation.split('\n')[0]}`,
    );
    return;
  }
  expect.fail(
    `no seed of ${seeds[0]}…${seeds.at(-1)} (overlap '${options.overlap}') caught the mutant ${mutant}`,
  );
}
