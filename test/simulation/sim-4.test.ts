/** Seeded simulation, share 4 of : see seeds.ts and simulation.ts. */
import { describe, expect, it } from 'vitest';
import { firstViolation, report, seedsOfFile } from './seeds.js';

describe('seeded simulation (share 4)', () => {
  const seeds = seedsOfFile(3);
  it.skipIf(seeds.length === 0)(
    `keeps every invariant over ${seeds.length} seeds`,
    { timeout: 600_000 },
    async () => {
      const failing = await firstViolation(seeds);
      if (failing !== undefined) expect.fail(report(failing));
    },
  );
});
