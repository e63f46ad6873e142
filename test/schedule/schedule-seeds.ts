/** The seeds of the seeded schedule simulation (its test and the self-tests of its mutants run the same). */
const SEEDS = Number(process.env['SCHEDULE_SIM_SEEDS'] ?? 400);
const only = process.env['SCHEDULE_SIM_SEED'];

/** Run with overlap 'allow'. */
export const SCHEDULE_SEEDS: readonly number[] = only
  ? [Number(only)]
  : Array.from({ length: SEEDS }, (_, index) => index + 1);
/** Run with overlap 'skip', manual triggers and runs that end: the first of SCHEDULE_SEEDS. */
export const SCHEDULE_SKIP_SEEDS: readonly number[] = only
  ? SCHEDULE_SEEDS
  : SCHEDULE_SEEDS.slice(0, Number(process.env['SCHEDULE_SIM_SKIP_SEEDS'] ?? 150));
