/**
 * Which seeds a test file runs, and how a failing seed is reported. The default seeds are split
 * across the sim-*.test.ts files (vitest runs files in parallel forks); `SIM_SEEDS=<n>` runs n seeds
 * in all, `SIM_SEED=<n>` replays just that one (in the first file).
 */
import { vi } from 'vitest';
import { FAKED_TIMERS, runSeed, type SimulationResult } from './simulation.js';
import type { WorkloadProfile } from './workload.js';

export const DEFAULT_SEEDS = 2_000;
/** How many sim-*.test.ts files share the seeds. */
export const SEED_FILES = 4;
const TRACE_TAIL = 60;

/** The seeds of file `fileIndex` (0-based): every SEED_FILES-th seed from 1 to SIM_SEEDS, or just SIM_SEED. */
export function seedsOfFile(fileIndex: number): number[] {
  const only = process.env['SIM_SEED'];
  if (only !== undefined && only !== '') return fileIndex === 0 ? [Number(only)] : [];
  const total = Number(process.env['SIM_SEEDS'] ?? DEFAULT_SEEDS);
  const seeds: number[] = [];
  for (let seed = 1 + fileIndex; seed <= total; seed += SEED_FILES) seeds.push(seed);
  return seeds;
}

/** Runs seeds of a workload profile on fake timers until one violates an invariant; returns that one's result, or undefined. */
export async function firstViolation(
  seeds: readonly number[],
  profile: WorkloadProfile = 'default',
): Promise<SimulationResult | undefined> {
  vi.useFakeTimers({ toFake: [...FAKED_TIMERS] });
  try {
    for (const seed of seeds) {
      const result = await runSeed(seed, profile);
      if (result.violation !== undefined) return result;
    }
    return undefined;
  } finally {
    vi.useRealTimers();
  }
}

/** The message a failing seed prints: the seed, how to replay it (a default-profile seed unless told), the violation and the end of its trace. */
export function report(
  result: SimulationResult,
  replay = `SIM_SEED=${result.seed} npx vitest run test/simulation/`,
): string {
  return [
    `seed ${result.seed} violated an invariant after ${result.steps} steps, ${result.simulatedMs} ms of simulated time`,
    `replay: ${replay}`,
    result.violation ?? '',
    `--- last ${TRACE_TAIL} trace entries ---`,
    ...result.trace.slice(-TRACE_TAIL),
  ].join('\n');
}
