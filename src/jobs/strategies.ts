/**
 * How a job's work items are spread over its live workers (pure): `evenly` (counts differ by at
 * most one; items stay with their holder where the counts allow, so a rebalance moves as few as
 * it can), `rendezvous` (highest-random-weight hashing: each item goes to the worker with the
 * highest hash of (item, worker), so adding or removing one worker moves only the items that must
 * move), `evenlyRendezvous` (the same hashing, each worker taking no more than an even share, so
 * counts differ by at most one and a change of membership moves a few more items than must move),
 * and strategies registered by name. Every result is checked: each item of the pool held by exactly
 * one live worker.
 */
import { createHash } from 'node:crypto';
import { InvalidArgumentError } from '../errors/usage-errors.js';

/**
 * What an assignment strategy decides from: the pool's items, the live workers, and who holds what now.
 *
 * @category Jobs
 */
export interface AssignmentInput {
  /** The work pool's item ids. */
  readonly items: readonly string[];
  /** The live workers' ids. */
  readonly workers: readonly string[];
  /** Who holds what now (empty at first). */
  readonly current: Readonly<Record<string, readonly string[]>>;
}

/**
 * Item ids by worker id; every live worker has an entry (possibly empty).
 *
 * @category Jobs
 */
export type Assignment = Record<string, string[]>;

/**
 * How the manager deals a job's items to the live job workers; `evenly`, `rendezvous` and
 * `evenlyRendezvous` ship, others are registered by name (`JobWorkerOptions.strategies`). It must
 * be deterministic: every job worker may become the manager.
 *
 * @category Jobs
 */
export type AssignmentStrategy = (input: AssignmentInput) => Assignment;

/**
 * Counts differ by at most one; a worker keeps what it holds up to its quota, the rest is dealt to those below theirs.
 *
 * @category Jobs
 */
export const evenly: AssignmentStrategy = ({ items, workers, current }) => {
  const result: Assignment = Object.fromEntries(
    [...workers].sort().map((worker) => [worker, [] as string[]]),
  );
  if (workers.length === 0) return result;
  const pool = new Set(items);
  const kept = new Map(
    [...workers]
      .sort()
      .map((worker) => [worker, (current[worker] ?? []).filter((item) => pool.has(item))]),
  );
  // The larger quotas go to those holding most, so fewer items move.
  const order = [...kept.keys()].sort(
    (a, b) =>
      (kept.get(b) as string[]).length - (kept.get(a) as string[]).length || (a < b ? -1 : 1),
  );
  const base = Math.floor(items.length / workers.length);
  const quota = new Map(
    order.map((worker, index) => [worker, base + (index < items.length % workers.length ? 1 : 0)]),
  );
  const placed = new Set<string>();
  for (const worker of order) {
    for (const item of kept.get(worker) as string[]) {
      if ((result[worker] as string[]).length >= (quota.get(worker) as number) || placed.has(item))
        continue;
      (result[worker] as string[]).push(item);
      placed.add(item);
    }
  }
  const rest = [...items].sort().filter((item) => !placed.has(item));
  for (const worker of order)
    while ((result[worker] as string[]).length < (quota.get(worker) as number) && rest.length > 0)
      (result[worker] as string[]).push(rest.shift() as string);
  for (const list of Object.values(result)) list.sort();
  return result;
};

/**
 * The weight of an (item, worker) pair in both hashing strategies: sha256 of the item, a NUL and
 * the worker, as lower-case hex, so that comparing two weights as strings compares their bytes. Any
 * program can compute it, and so the same placement.
 */
function rendezvousWeight(item: string, worker: string): string {
  return createHash('sha256').update(item).update('\u0000').update(worker).digest('hex');
}

/**
 * Highest random weight: each item to the worker with the highest sha256(item, worker).
 *
 * @category Jobs
 */
export const rendezvous: AssignmentStrategy = ({ items, workers }) => {
  const result: Assignment = Object.fromEntries(
    [...workers].sort().map((worker) => [worker, [] as string[]]),
  );
  for (const item of [...items].sort()) {
    let best: { worker: string; weight: string } | undefined;
    for (const worker of workers) {
      const weight = rendezvousWeight(item, worker);
      if (
        best === undefined ||
        weight > best.weight ||
        (weight === best.weight && worker < best.worker)
      )
        best = { worker, weight };
    }
    if (best !== undefined) (result[best.worker] as string[]).push(item);
  }
  return result;
};

/**
 * Rendezvous hashing with room, distributed-job-manager's third strategy: each item goes to the
 * worker of highest sha256(item, worker) among those not yet filled. The (item, worker) pairs are
 * taken by weight, heaviest first, and a pair places its item on its worker when the item is not
 * placed yet and the worker has room.
 *
 * Room keeps the counts as even as `evenly`'s. With n items over w workers every worker has room
 * for ⌊n/w⌋ items, and for one more until n mod w workers have taken one more; so the first n mod w
 * workers to reach ⌊n/w⌋ + 1 (in the pairs' order) hold ⌈n/w⌉ items, every other worker holds
 * ⌊n/w⌋, and counts differ by at most one. A room of ⌈n/w⌉ for every worker would not do: 10 items
 * over 4 workers could end 3, 3, 3, 1.
 *
 * Like `rendezvous` it ignores who holds what now: the answer depends only on the pool and the set
 * of live workers, so a worker that joins and leaves again (or leaves and comes back) finds the
 * assignment as it was. Where `rendezvous`'s counts already differ by at most one, the answer is
 * `rendezvous`'s. A change of membership moves more items than the fewest possible, because the
 * room taken from the workers that stay pushes some items on to their next choice: over 120 items,
 * 3 → 4 workers moves 32 where 30 must, and one of the 4 leaving moves 35 where 30 must. The
 * excess grows as the items per worker shrink: one worker joining 20 moves about 1.4 times the
 * fewest over 1 000 items, and 2.25 times (up to 2.75) over 100 (the tables printed by
 * test/jobs/strategies.test.ts). Equal weights (a sha256 collision) go to the worker first by
 * name, then the item first by name, so the order of `items` and `workers` does not matter.
 *
 * Time O(n·w·log(n·w)), the sort of the pairs: 10 000 items over 50 workers take about 0.7 s,
 * most of it hashing (`rendezvous` hashes every pair too).
 *
 * @category Jobs
 */
export const evenlyRendezvous: AssignmentStrategy = ({ items, workers }) => {
  const workerIds = [...new Set(workers)].sort();
  const result: Assignment = Object.fromEntries(
    workerIds.map((worker) => [worker, [] as string[]]),
  );
  if (workerIds.length === 0) return result;
  const itemIds = [...new Set(items)].sort();
  const workerCount = workerIds.length;
  // Pair p is item ⌊p / workerCount⌋ on worker p mod workerCount. The pairs are sorted by the first
  // 48 bits of their weight, held as numbers (a string per pair would take several times the memory);
  // the full weights are computed again only when those bits are equal.
  const pairCount = itemIds.length * workerCount;
  const leadingWeight = new Float64Array(pairCount);
  for (const [itemIndex, item] of itemIds.entries())
    for (const [workerIndex, worker] of workerIds.entries())
      leadingWeight[itemIndex * workerCount + workerIndex] = Number.parseInt(
        rendezvousWeight(item, worker).slice(0, 12),
        16,
      );
  const itemOf = (pair: number): string => itemIds[Math.floor(pair / workerCount)] as string;
  const workerOf = (pair: number): string => workerIds[pair % workerCount] as string;
  const heaviestFirst = (a: number, b: number): number => {
    const leading = (leadingWeight[b] as number) - (leadingWeight[a] as number);
    if (leading !== 0) return leading;
    const weightOfA = rendezvousWeight(itemOf(a), workerOf(a));
    const weightOfB = rendezvousWeight(itemOf(b), workerOf(b));
    if (weightOfA !== weightOfB) return weightOfA > weightOfB ? -1 : 1;
    // Equal weights: the worker first by name, then the item (both lists are sorted).
    return (a % workerCount) - (b % workerCount) || a - b;
  };
  const pairs = Uint32Array.from({ length: pairCount }, (_, pair) => pair).sort(heaviestFirst);

  const base = Math.floor(itemIds.length / workerCount);
  let oneMoreLeft = itemIds.length % workerCount;
  const held = new Uint32Array(workerCount);
  const placed = new Uint8Array(itemIds.length);
  let placedCount = 0;
  for (const pair of pairs) {
    if (placedCount === itemIds.length) break;
    const itemIndex = Math.floor(pair / workerCount);
    const workerIndex = pair % workerCount;
    if (placed[itemIndex] === 1) continue;
    const count = held[workerIndex] as number;
    if (count > base || (count === base && oneMoreLeft === 0)) continue;
    if (count === base) oneMoreLeft -= 1;
    held[workerIndex] = count + 1;
    placed[itemIndex] = 1;
    placedCount += 1;
    (result[workerOf(pair)] as string[]).push(itemOf(pair));
  }
  for (const list of Object.values(result)) list.sort();
  return result;
};

/** Strategies by name: `evenly`, `rendezvous`, `evenlyRendezvous`, and the user's own. */
export class StrategyRegistry {
  private readonly strategies = new Map<string, AssignmentStrategy>([
    ['evenly', evenly],
    ['rendezvous', rendezvous],
    ['evenlyRendezvous', evenlyRendezvous],
  ]);

  register(name: string, strategy: AssignmentStrategy): this {
    if (typeof name !== 'string' || !/^[A-Za-z][A-Za-z0-9_.-]{0,63}$/.test(name))
      throw new InvalidArgumentError(
        'name',
        `expected a strategy name such as "by-tenant", got ${JSON.stringify(name)}`,
      );
    if (typeof strategy !== 'function')
      throw new InvalidArgumentError(
        'strategy',
        `strategy "${name}": expected a function ({ items, workers, current }) => { [workerId]: itemIds[] }`,
      );
    if (this.strategies.has(name))
      throw new InvalidArgumentError('name', `strategy "${name}" is already registered`);
    this.strategies.set(name, strategy);
    return this;
  }

  has(name: string): boolean {
    return this.strategies.has(name);
  }

  /** Runs strategy `name` and checks its answer; InvalidArgumentError naming the strategy for a wrong one. */
  assign(name: string, input: AssignmentInput): Assignment {
    const strategy = this.strategies.get(name);
    if (strategy === undefined)
      throw new InvalidArgumentError(
        'strategy',
        `no strategy "${name}" (registered: ${[...this.strategies.keys()].join(', ')})`,
      );
    let answer: unknown;
    try {
      answer = strategy(input);
    } catch (error) {
      throw new InvalidArgumentError(
        'strategy',
        `strategy "${name}" threw: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
    if (typeof (answer as { then?: unknown } | null)?.then === 'function') {
      (answer as Promise<unknown>).then(undefined, () => undefined); // never an unhandled rejection
      throw new InvalidArgumentError(
        'strategy',
        `strategy "${name}" returned a promise: a strategy decides synchronously`,
      );
    }
    return checkAssignment(name, input, answer);
  }
}

/** Each item of the pool held by exactly one live worker, and nothing else. */
export function checkAssignment(name: string, input: AssignmentInput, answer: unknown): Assignment {
  const wrong = (problem: string): InvalidArgumentError =>
    new InvalidArgumentError('strategy', `strategy "${name}" ${problem}`);
  if (typeof answer !== 'object' || answer === null || Array.isArray(answer))
    throw wrong('must return { [workerId]: itemIds[] }');
  const live = new Set(input.workers);
  const pool = new Set(input.items);
  const seen = new Set<string>();
  const result: Assignment = Object.fromEntries(
    [...input.workers].sort().map((worker) => [worker, [] as string[]]),
  );
  for (const [worker, held] of Object.entries(answer as Record<string, unknown>)) {
    if (!live.has(worker)) throw wrong(`gave items to "${worker}", which is not a live worker`);
    if (!Array.isArray(held)) throw wrong(`must give "${worker}" an array of item ids`);
    for (const item of held) {
      if (typeof item !== 'string' || !pool.has(item))
        throw wrong(`gave "${worker}" ${JSON.stringify(item)}, which is not an item of the pool`);
      if (seen.has(item)) throw wrong(`gave item "${item}" to two workers`);
      seen.add(item);
      (result[worker] as string[]).push(item);
    }
  }
  const missing = input.items.filter((item) => !seen.has(item));
  if (missing.length > 0 && input.workers.length > 0)
    throw wrong(
      `left items unassigned: ${missing.slice(0, 5).join(', ')}${missing.length > 5 ? ', …' : ''}`,
    );
  for (const list of Object.values(result)) list.sort();
  return result;
}

/** What changes between two assignments: per worker, what it must stop and what it may start; and how many items changed holder. */
export function assignmentMoves(
  before: Readonly<Record<string, readonly string[]>>,
  after: Readonly<Record<string, readonly string[]>>,
): {
  readonly stop: Record<string, string[]>;
  readonly start: Record<string, string[]>;
  readonly moved: number;
} {
  const holderBefore = new Map(
    Object.entries(before).flatMap(([worker, items]) =>
      items.map((item) => [item, worker] as const),
    ),
  );
  const stop: Record<string, string[]> = {};
  const start: Record<string, string[]> = {};
  let moved = 0;
  for (const [worker, items] of Object.entries(after)) {
    for (const item of items) {
      const previous = holderBefore.get(item);
      if (previous === worker) continue;
      (start[worker] ??= []).push(item);
      if (previous !== undefined) {
        (stop[previous] ??= []).push(item);
        moved += 1;
      }
    }
  }
  const held = new Set(Object.values(after).flat());
  for (const [item, worker] of holderBefore) if (!held.has(item)) (stop[worker] ??= []).push(item);
  return { stop, start, moved };
}
