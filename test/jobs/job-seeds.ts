/** The seeds of the seeded job simulation (its test and the self-tests of its mutants run the same). */
const SEEDS = Number(process.env['JOB_SIM_SEEDS'] ?? 80);
const only = process.env['JOB_SIM_SEED'];

export const JOB_SEEDS: readonly number[] = only
  ? [Number(only)]
  : Array.from({ length: SEEDS }, (_, index) => index + 1);
