/** The long-horizon schedule simulation finds the mutant tick-record-pruned-while-named (test/mutants/mutants.ts) within the suite's seeds. */
import { describe, it } from 'vitest';
import { LONG_SCHEDULE_SEEDS, runLongScheduleSeed } from '../schedule/schedule-long-simulation.js';
import { MUTANTS } from './mutants.js';
import { expectSearchCatches } from './search-seeds.js';

describe('mutant tick-record-pruned-while-named', () => {
  it(
    `the long schedule simulation finds it: ${MUTANTS.find((mutant) => mutant.name === 'tick-record-pruned-while-named')?.defect ?? '?'}`,
    { timeout: 900_000 },
    () =>
      expectSearchCatches('tick-record-pruned-while-named', LONG_SCHEDULE_SEEDS, (seed) =>
        runLongScheduleSeed(seed),
      ),
  );
});
