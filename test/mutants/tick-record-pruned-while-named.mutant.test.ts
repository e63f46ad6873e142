/** The long-horizon schedule simulation finds the mutant tick-record-pruned-while-named (test/mutants/mutants.ts) within the suite's seeds. */
import { describe, expect, it } from 'vitest';
import { runLongScheduleSeed } from '../schedule/schedule-long-simulation.js';
import { LONG_SCHEDULE_SEEDS } from '../schedule/long-schedule-seeds.js';
import { MUTANTS } from './mutants.js';
import { searchSeeds } from './search-seeds.js';

describe('mutant tick-record-pruned-while-named', () => {
  it(
    `the long schedule simulation finds it: ${MUTANTS.find((mutant) => mutant.name === 'tick-record-pruned-while-named')?.defect ?? '?'}`,
    { timeout: 900_000 },
    async () => {
      const seeds = searchSeeds('tick-record-pruned-while-named', LONG_SCHEDULE_SEEDS);
      for (const seed of seeds) {
        const result = await runLongScheduleSeed(seed);
        if (result.violation === undefined) continue;
        console.log(
          `tick-record-pruned-while-named: caught by seed ${seed} (searched from seed ${seeds[0]}): ${result.violation.split('\n')[0]}`,
        );
        return;
      }
      expect.fail(
        `no seed of ${seeds[0]}…${LONG_SCHEDULE_SEEDS.length} caught the mutant tick-record-pruned-while-named`,
      );
    },
  );
});
