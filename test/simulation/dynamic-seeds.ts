/** How many seeds of the plan simulation's `dynamic` profile sim-dynamic.test.ts runs, and the mutants of the dynamic protocols search. */
export const DYNAMIC_SEEDS = 3000;
