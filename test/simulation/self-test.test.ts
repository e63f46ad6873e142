/**
 * The simulation's self-test: each switch of src/store/reintroduced-defects.ts puts a known defect
 * back; the default seeds, drawn with the `stress` profile (more processes racing, faults ten times
 * as dense, see workload.ts), must find a violation for every one of them. A seed counts only if it
 * passes with every switch off, so a catch is the defect's doing, not one of the engine's own
 * problems the simulation finds (see the report of violations found with all switches off).
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { reintroducedDefects } from '../../src/store/reintroduced-defects.js';
import { DEFAULT_SEEDS } from './seeds.js';
import { FAKED_TIMERS, runSeed, type SimulationResult } from './simulation.js';

type Defect = keyof typeof reintroducedDefects;

const DEFECTS = Object.keys(reintroducedDefects) as Defect[];

function setDefects(on: Defect | undefined): void {
  for (const defect of DEFECTS) reintroducedDefects[defect] = defect === on;
}

/** The first seed that violates an invariant with `defect` on and none with every switch off. */
async function firstCatch(defect: Defect): Promise<{ caught: SimulationResult; baselineFailures: number } | undefined> {
  vi.useFakeTimers({ toFake: [...FAKED_TIMERS] });
  let baselineFailures = 0;
  try {
    for (let seed = 1; seed <= DEFAULT_SEEDS; seed++) {
      setDefects(defect);
      const withDefect = await runSeed(seed, 'stress');
      if (withDefect.violation === undefined) continue;
      setDefects(undefined);
      if ((await runSeed(seed, 'stress')).violation === undefined) return { caught: withDefect, baselineFailures };
      baselineFailures += 1;
    }
    return undefined;
  } finally {
    setDefects(undefined);
    vi.useRealTimers();
  }
}

describe('seeded simulation: self-test', () => {
  afterEach(() => setDefects(undefined));

  it.each(DEFECTS)('finds the reintroduced defect %s', { timeout: 300_000 }, async (defect) => {
    const found = await firstCatch(defect);
    expect(found, `no seed of 1…${DEFAULT_SEEDS} caught ${defect}`).toBeDefined();
    const { caught, baselineFailures } = found as { caught: SimulationResult; baselineFailures: number };
    console.log(
      `${defect}: caught by stress seed ${caught.seed}, ` +
        `${baselineFailures} earlier seed(s) skipped because they fail without it too: ${caught.violation?.split('\n')[0]}`,
    );
  });
});
