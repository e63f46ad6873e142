/**
 * Seeded randomness for every simulation: each choice comes from one of these, so a seed replays
 * exactly. The draws are part of each seed's meaning: a recorded seed (a mutant's `searchFrom`, a
 * replay line) names the run these draws make, so changing how one draws changes what every seed
 * means. The short schedule and job simulations draw from `new Prng(seed)`, the others from
 * `streamFor(seed, purpose)`; each keeps its own, for the same reason.
 */

/** A small, fast, seedable PRNG (mulberry32): floats in [0, 1). */
export class Prng {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  }

  /** A whole number in [low, high]. */
  int(low: number, high: number): number {
    return low + Math.floor(this.next() * (high - low + 1));
  }

  chance(probability: number): boolean {
    return this.next() < probability;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error('Prng.pick: no items');
    return items[Math.floor(this.next() * items.length)] as T;
  }
}

/** FNV-1a over the parts: a stable number for deterministic per-thing decisions that must not consume a stream. */
export function stableHash(...parts: readonly (string | number)[]): number {
  let hash = 0x811c9dc5;
  const text = parts.join('\u0000');
  for (let index = 0; index < text.length; index++) {
    hash ^= text.charCodeAt(index);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash;
}

/** An independent stream for one purpose of one seed (workload, scheduling, Math.random). */
export function streamFor(seed: number, purpose: string): Prng {
  return new Prng(stableHash(seed, purpose));
}
