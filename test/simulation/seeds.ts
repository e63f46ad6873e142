/**
 * Which seeds a test file runs, and how a failing seed is reported. The default seeds are split
 * across the sim-*.test.ts files (vitest runs files in parallel forks); `SIM_SEEDS=<n>` runs n seeds
 * in all, `SIM_SEED=<n>` replays just that one (in the first file): see test/sim-harness/seed-runner.ts.
 */
import { vi } from 'vitest';
import { firstViolation as firstOf, seedsFromEnv } from '../sim-harness/seed-runner.js';
import { FAKED_TIMERS } from '../sim-harness/simulated-clock.js';
import { reportTraceTail } from '../sim-harness/violation-report.js';
import { runSeed, type SimulationResult } from './simulation.js';
import type { WorkloadProfile } from './workload.js';

export const DEFAULT_SEEDS = 2_000;
/** How many sim-*.test.ts files share the seeds. */
export const SEED_FILES = 4;

/** The seeds of file `fileIndex` (0-based): every SEED_FILES-th seed from 1 to SIM_SEEDS, or just SIM_SEED (in the first file). */
export function seedsOfFile(fileIndex: number): number[] {
  return seedsFromEnv('SIM', DEFAULT_SEEDS).filter((_, index) => index % SEED_FILES === fileIndex);
}

/** Runs seeds of a workload profile on fake timers until one violates an invariant; returns that one's result, or undefined. */
export async function firstViolation(
  seeds: readonly number[],
  profile: WorkloadProfile = 'default',
): Promise<SimulationResult | undefined> {
  vi.useFakeTimers({ toFake: [...FAKED_TIMERS] });
  try {
    return await firstOf(seeds, (seed) => runSeed(seed, profile));
  } finally {
    vi.useRealTimers();
  }
}

/** The message a failing seed prints: the seed, how to replay it (a default-profile seed unless told), the violation and the end of its trace. */
export function report(
  result: SimulationResult,
  replay = `SIM_SEED=${result.seed} npx vitest run test/simulation/`,
): string {
  return reportTraceTail(result, replay);
}
