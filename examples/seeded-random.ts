/** Seeded randomness for reproducible examples and tests (the seed is printed, so a run can be repeated). */

/** mulberry32: a small, fast, seeded PRNG returning floats in [0, 1). */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** `k` distinct indices of [0, n) in random order (partial Fisher–Yates). */
export function pickDistinct(n: number, k: number, random: () => number): number[] {
  const pool = Array.from({ length: n }, (_, i) => i);
  for (let j = 0; j < k; j++) {
    const swap = j + Math.floor(random() * (n - j));
    [pool[j], pool[swap]] = [pool[swap] as number, pool[j] as number];
  }
  return pool.slice(0, k);
}
