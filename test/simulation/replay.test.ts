/** Determinism: the same seed, run twice (with other seeds in between), applies the same operations in the same order. */
import { describe, expect, it, vi } from 'vitest';
import { FAKED_TIMERS } from '../sim-harness/simulated-clock.js';
import { runSeed } from './simulation.js';

describe('seeded simulation: replay', () => {
  it('runs one seed twice with exactly the same trace', async () => {
    vi.useFakeTimers({ toFake: [...FAKED_TIMERS] });
    try {
      const seed = Number(process.env['SIM_SEED'] ?? 7);
      const first = await runSeed(seed);
      await runSeed(seed + 1); // state left by another seed must not leak into the replay
      const second = await runSeed(seed);
      expect(first.trace.length).toBeGreaterThan(100);
      expect(first.trace.some((line) => line.includes(' start /plans/'))).toBe(true); // task functions ran
      expect(second.trace).toEqual(first.trace);
      expect(second.violation).toEqual(first.violation);
    } finally {
      vi.useRealTimers();
    }
  });
});
