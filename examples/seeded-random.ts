/** Seeded randomness for reproducible examples and tests (the seed is printed, so a run can be repeated). */

/** mulberry32: a small, fast, seeded PRNG returning floats in [0, 1) (the fault harness's). */
export { seededRandom as prng } from '../src/testing/fault-harness/seeded-random.js';

/** `k` distinct indices of [0, n) in random order (partial Fisher–Yates). */
export function pickDistinct(n: number, k: number, random: () => number): number[] {
  const pool = Array.from({ length: n }, (_, i) => i);
  for (let j = 0; j < k; j++) {
    const swap = j + Math.floor(random() * (n - j));
    [pool[j], pool[swap]] = [pool[swap] as number, pool[j] as number];
  }
  return pool.slice(0, k);
}
