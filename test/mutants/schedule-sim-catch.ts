/**
 * The self-tests of the mutants the seeded schedule simulation (test/schedule) catches: the first of
 * the suite's own seeds, from the mutant's `searchFrom` on (search-seeds.ts), that finds a violation
 * with the mutant in place, with overlap 'allow' (SCHEDULE_SEEDS) or 'skip' (SCHEDULE_SKIP_SEEDS).
 * test/schedule/schedule-simulation.test.ts runs each of those seeds in the same mode on the product
 * as it is and expects them all to pass, in every suite run, so a violation here is the mutant's doing.
 */
import {
  SCHEDULE_SEEDS,
  SCHEDULE_SKIP_SEEDS,
  runScheduleSeed,
  type ScheduleSimOptions,
} from '../schedule/schedule-simulation.js';
import { expectSearchCatches } from './search-seeds.js';

export async function expectScheduleSimulationCatches(
  mutant: string,
  options: ScheduleSimOptions,
): Promise<void> {
  await expectSearchCatches(
    mutant,
    options.overlap === 'skip' ? SCHEDULE_SKIP_SEEDS : SCHEDULE_SEEDS,
    (seed) => runScheduleSeed(seed, options),
    `overlap '${options.overlap}'`,
  );
}
