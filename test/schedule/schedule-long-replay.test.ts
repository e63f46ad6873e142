/**
 * Determinism of the long schedule simulation: the same seed, run twice (another in between), goes
 * through the same events and leaves the same tick records and plans. Bursts of manual triggers
 * within one millisecond are in it, whose tick ids (and so their order) must come from the seed.
 */
import { describe, expect, it } from 'vitest';
import { runLongScheduleSeed } from './schedule-long-simulation.js';

/**
 * A seed whose run has a burst of manual triggers that leave tick records (checked below): 4 since
 * addTasks reads the plan's child count (the listing limit: other operations, other
 * interleavings); 16 since pause, resume and cancel read the plan's `sub-plans` (other operations, other interleavings); 2 since
 * schedulers step backfills at each pass (a listing of each schedule's backfills: other
 * interleavings); 9 since plans keep their history by default and a scheduler reads a cancelled plan's control record
 * first (other operations, so other interleavings); 7 before that, 2 before pause and cancel read
 * the plan's state first.
 */
const SEED = Number(process.env['SCHEDULE_LONG_SIM_SEED'] ?? 4);

describe('schedule simulation over hours of virtual time: replay', () => {
  it(
    'runs one seed twice with the same events, tick records and plans',
    { timeout: 120_000 },
    async () => {
      const first = await runLongScheduleSeed(SEED);
      await runLongScheduleSeed(SEED + 1);
      const second = await runLongScheduleSeed(SEED);
      expect(first.events.some((event) => event.includes('manual triggers'))).toBe(true);
      expect(first.ticks.some((id) => id.startsWith('manual-'))).toBe(true);
      expect(second.events).toEqual(first.events);
      expect(second.ticks).toEqual(first.ticks);
      expect(second.plans).toEqual(first.plans);
      expect(second.violation).toEqual(first.violation);
    },
  );
});
