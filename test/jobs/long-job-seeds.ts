/** The seeds of the long-horizon job simulation (its test and the self-test of its mutant run the same). */
const SEEDS = Number(process.env['JOB_LONG_SIM_SEEDS'] ?? 12);
const only = process.env['JOB_LONG_SIM_SEED'];

export const LONG_JOB_SEEDS: readonly number[] = only
  ? [Number(only)]
  : Array.from({ length: SEEDS }, (_, index) => index + 1);
