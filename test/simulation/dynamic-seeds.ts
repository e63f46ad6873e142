/**
 * How many seeds of the plan simulation's `dynamic` profile sim-dynamic.test.ts runs, and the mutants
 * of the dynamic protocols search. 5 300 since 2026-11-28: after the finishing writes were pipelined,
 * the first seed that catches the mutant spawn-ignores-committed-batch moved from 817 to 5 270.
 */
export const DYNAMIC_SEEDS = 5300;
