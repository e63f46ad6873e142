/** The seeds of the long-horizon schedule simulation (its test and the self-test of its mutant run the same). */
const SEEDS = Number(process.env['SCHEDULE_LONG_SIM_SEEDS'] ?? 40);
const only = process.env['SCHEDULE_LONG_SIM_SEED'];

export const LONG_SCHEDULE_SEEDS: readonly number[] = only
  ? [Number(only)]
  : Array.from({ length: SEEDS }, (_, index) => index + 1);
