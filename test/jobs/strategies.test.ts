import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../../src/errors/usage-errors.js';
import {
  assignmentMoves,
  checkAssignment,
  evenly,
  evenlyRendezvous,
  rendezvous,
  StrategyRegistry,
  type Assignment,
  type AssignmentInput,
} from '../../src/jobs/strategies.js';
import { leaseFor, leaseProblem, stopDeadline, takeOver } from '../../src/jobs/lease.js';
import { expectThrows } from '../support/expect-error.js';

const ITEMS = Array.from({ length: 12 }, (_, index) => `mailbox-${String(index).padStart(2, '0')}`);
const counts = (assignment: Assignment): number[] =>
  Object.values(assignment).map((items) => items.length);
const total = (assignment: Assignment): string[] => Object.values(assignment).flat().sort();

/** A small seeded generator (mulberry32), so that a failing case comes back the same. */
function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let mixed = Math.imul(state ^ (state >>> 15), 1 | state);
    mixed = (mixed + Math.imul(mixed ^ (mixed >>> 7), 61 | mixed)) ^ mixed;
    return ((mixed ^ (mixed >>> 14)) >>> 0) / 4_294_967_296;
  };
}

function shuffled<T>(values: readonly T[], random: () => number): T[] {
  const copy = [...values];
  for (let index = copy.length - 1; index > 0; index--) {
    const other = Math.floor(random() * (index + 1));
    [copy[index], copy[other]] = [copy[other] as T, copy[index] as T];
  }
  return copy;
}

/**
 * The same input as another manager may see it: the live workers (ZooKeeper lists children in no
 * set order) and the pool's items in another order, the holders in another key order. Each
 * holder's list is as stored in the one assignment node, the same for every manager.
 */
function reordered(input: AssignmentInput, random: () => number): AssignmentInput {
  return {
    items: shuffled(input.items, random),
    workers: shuffled(input.workers, random),
    current: Object.fromEntries(shuffled(Object.entries(input.current), random)),
  };
}

/**
 * The fewest items that must change holder for counts within one: those held by workers that are
 * gone, and those a live worker holds above its quota, where the larger quotas (base + 1, one per
 * item left over) go to workers holding more than the base.
 */
function fewestMoves({ items, workers, current }: AssignmentInput): number {
  const pool = new Set(items);
  const live = new Set(workers);
  const base = Math.floor(items.length / workers.length);
  const larger = items.length % workers.length;
  let heldByGone = 0;
  for (const [worker, held] of Object.entries(current))
    if (!live.has(worker)) heldByGone += held.filter((item) => pool.has(item)).length;
  const kept = workers.map(
    (worker) => (current[worker] ?? []).filter((item) => pool.has(item)).length,
  );
  const aboveBase = kept.reduce((sum, count) => sum + Math.max(0, count - base), 0);
  const overBase = kept.filter((count) => count > base).length;
  return heldByGone + aboveBase - Math.min(larger, overBase);
}

/** A random membership change: a pool of up to 15 items (some gone from it), up to 5 live workers of 7 names, held at random. */
function randomRebalance(random: () => number): AssignmentInput {
  const names = ['w0', 'w1', 'w2', 'w3', 'w4', 'w5', 'w6'];
  const workers = shuffled(names, random).slice(0, 1 + Math.floor(random() * 5));
  const known = Array.from({ length: 18 }, (_, index) => `item-${String(index).padStart(2, '0')}`);
  const items = known.filter(() => random() < 0.8).slice(0, 15);
  const current: Record<string, string[]> = {};
  for (const item of known) {
    if (random() < 0.2) continue; // not held: new to the pool
    const holder = names[Math.floor(random() * names.length)] as string;
    (current[holder] ??= []).push(item);
  }
  return { items, workers, current };
}

describe('evenly', () => {
  it('gives 3 workers 4 items each, a 4th makes it 3 each moving only 3 items, and a worker leaving moves only its own', () => {
    const three = evenly({ items: ITEMS, workers: ['a', 'b', 'c'], current: {} });
    expect(counts(three)).toEqual([4, 4, 4]);
    expect(total(three)).toEqual(ITEMS);
    const four = evenly({ items: ITEMS, workers: ['a', 'b', 'c', 'd'], current: three });
    expect(counts(four)).toEqual([3, 3, 3, 3]);
    expect(assignmentMoves(three, four).moved).toBe(3);
    const back = evenly({ items: ITEMS, workers: ['a', 'b', 'd'], current: four });
    expect(counts(back)).toEqual([4, 4, 4]);
    // Only c's three change holder: no item moves between the workers that stay.
    expect(assignmentMoves(four, back).moved).toBe(3);
    expect(Object.values(assignmentMoves(four, back).start).flat().sort()).toEqual(
      [...(four['c'] as string[])].sort(),
    );
  });

  it('keeps counts within one for any pool and membership, items from a changed pool included', () => {
    for (let workers = 1; workers <= 7; workers++) {
      for (let items = 0; items <= 20; items++) {
        const ids = ITEMS.concat(ITEMS.map((item) => `${item}-b`)).slice(0, items);
        const names = Array.from({ length: workers }, (_, index) => `w${index}`);
        const assignment = evenly({
          items: ids,
          workers: names,
          current: { w0: ['gone', ...ids.slice(0, 5)] },
        });
        expect(
          Math.max(...counts(assignment)) - Math.min(...counts(assignment)),
        ).toBeLessThanOrEqual(1);
        expect(total(assignment)).toEqual([...ids].sort());
      }
    }
  });

  it('every manager computes the same assignment, to the byte, whatever order it sees the workers, the items and the holders in', () => {
    const input: AssignmentInput = {
      items: ITEMS,
      workers: ['w3', 'w1', 'w5', 'w2', 'w4'],
      current: { w4: ITEMS.slice(0, 5), gone: ITEMS.slice(5, 7), w2: ITEMS.slice(7, 8) },
    };
    const expected = JSON.stringify(evenly(input));
    const random = seededRandom(1);
    for (let round = 0; round < 30; round++)
      expect(JSON.stringify(evenly(reordered(input, random)))).toBe(expected);
  });

  it('keeps what each holds up to its quota, gives the larger quotas to those holding most, and deals the rest in order', () => {
    // 7 items over 3 workers: quotas 3, 2, 2. b holds 4: it keeps 3 (the larger quota is its), the 4th and gone's item move.
    const current = { b: ['i2', 'i5', 'i6', 'i7'], a: ['i1'], gone: ['i3'] };
    const items = ['i1', 'i2', 'i3', 'i4', 'i5', 'i6', 'i7'];
    const next = evenly({ items, workers: ['c', 'a', 'b'], current });
    expect(next).toEqual({ a: ['i1', 'i3'], b: ['i2', 'i5', 'i6'], c: ['i4', 'i7'] });
    expect(assignmentMoves(current, next).moved).toBe(2);
    // Nobody holds anything: the items in order, the larger quotas to the workers first by name.
    expect(
      evenly({ items: ['i5', 'i3', 'i1', 'i4', 'i2'], workers: ['c', 'b', 'a'], current: {} }),
    ).toEqual({ a: ['i1', 'i2'], b: ['i3', 'i4'], c: ['i5'] });
  });

  it("lists each worker's items in order, what it kept and what it was dealt together", () => {
    expect(
      evenly({ items: ['i1', 'i2', 'i3', 'i4'], workers: ['a', 'b'], current: { a: ['i4'] } }),
    ).toEqual({ a: ['i1', 'i4'], b: ['i2', 'i3'] });
  });

  it('moves no more items than a rebalance must, for any pool, membership and holding', () => {
    const random = seededRandom(7);
    for (let round = 0; round < 300; round++) {
      const input = randomRebalance(random);
      const next = evenly(input);
      expect(Math.max(...counts(next)) - Math.min(...counts(next))).toBeLessThanOrEqual(1);
      expect(total(next)).toEqual([...input.items].sort());
      expect(assignmentMoves(input.current, next).moved, JSON.stringify(input)).toBe(
        fewestMoves(input),
      );
    }
  });

  it('assigns nothing without a live worker', () => {
    expect(evenly({ items: ITEMS, workers: [], current: { gone: ITEMS } })).toEqual({});
  });
});

describe('rendezvous', () => {
  it('moves only the items that go to a new worker, and only a leaving worker’s items', () => {
    const items = Array.from({ length: 400 }, (_, index) => `tenant-${index}`);
    const three = rendezvous({ items, workers: ['a', 'b', 'c'], current: {} });
    const four = rendezvous({ items, workers: ['a', 'b', 'c', 'd'], current: three });
    const moves = assignmentMoves(three, four);
    expect(Object.keys(moves.start)).toEqual(['d']); // every move goes to the newcomer
    expect(moves.moved).toBeGreaterThan(60); // about a quarter of 400
    expect(moves.moved).toBeLessThan(140);
    const without = rendezvous({ items, workers: ['a', 'b', 'd'], current: four });
    const leaving = assignmentMoves(four, without);
    expect(leaving.moved).toBe((four['c'] as string[]).length); // only c's items change hands
    expect(Object.values(leaving.start).flat().sort()).toEqual([...(four['c'] as string[])].sort());
  });

  it('places each item on the worker with the highest sha256 of (item, NUL, worker), so any program can compute the same placement', () => {
    const weight = (item: string, worker: string): string =>
      createHash('sha256').update(`${item}\u0000${worker}`).digest('hex');
    const items = Array.from({ length: 60 }, (_, index) => `tenant-${index}`);
    const workers = ['a', 'b', 'c', 'd'];
    const assignment = rendezvous({ items, workers, current: {} });
    for (const item of items) {
      const heaviest = [...workers].sort((x, y) =>
        weight(item, y) > weight(item, x) ? 1 : -1,
      )[0] as string;
      expect(assignment[heaviest], item).toContain(item);
    }
  });

  it('every manager computes the same assignment, to the byte, whatever order it sees the workers and items in, and whoever holds what', () => {
    const input: AssignmentInput = {
      items: ITEMS,
      workers: ['w3', 'w1', 'w2'],
      current: { w1: ITEMS.slice(0, 6) },
    };
    const expected = JSON.stringify(rendezvous(input));
    const random = seededRandom(2);
    for (let round = 0; round < 20; round++)
      expect(JSON.stringify(rendezvous(reordered(input, random)))).toBe(expected);
    expect(JSON.stringify(rendezvous({ ...input, current: {} }))).toBe(expected);
  });

  it('assigns nothing without a live worker', () => {
    expect(rendezvous({ items: ITEMS, workers: [], current: {} })).toEqual({});
  });
});

describe('evenlyRendezvous', () => {
  const weight = (item: string, worker: string): string =>
    createHash('sha256').update(`${item}\u0000${worker}`).digest('hex');
  const spread = (assignment: Assignment): number =>
    Math.max(...counts(assignment)) - Math.min(...counts(assignment));

  /** Up to 60 items and 1 to 9 live workers, all named at random, and a random holding (some by workers that are gone). */
  function randomMembership(random: () => number): AssignmentInput {
    const name = (prefix: string, index: number): string =>
      `${prefix}-${Math.floor(random() * 1_000_000)}-${index}`;
    const items = Array.from({ length: Math.floor(random() * 61) }, (_, index) =>
      name('item', index),
    );
    const workers = Array.from({ length: 1 + Math.floor(random() * 9) }, (_, index) =>
      name('worker', index),
    );
    const holders = [...workers, 'gone'];
    const current: Record<string, string[]> = {};
    for (const item of items) {
      const holder = holders[Math.floor(random() * holders.length)] as string;
      if (random() < 0.7) (current[holder] ??= []).push(item);
    }
    return { items, workers, current };
  }

  it('gives each item of any pool to exactly one live worker: n mod w workers get ⌈n/w⌉ items, the others ⌊n/w⌋', () => {
    const random = seededRandom(11);
    for (let round = 0; round < 300; round++) {
      const input = randomMembership(random);
      const answer = evenlyRendezvous(input);
      const context = JSON.stringify(input);
      expect(checkAssignment('evenlyRendezvous', input, answer), context).toEqual(answer);
      const base = Math.floor(input.items.length / input.workers.length);
      const larger = input.items.length % input.workers.length;
      const expected = input.workers.map((_, index) => (index < larger ? base + 1 : base));
      expect(
        counts(answer).sort((a, b) => b - a),
        context,
      ).toEqual(expected);
      expect(spread(answer), context).toBeLessThanOrEqual(1);
    }
  });

  it('places each item on its heaviest worker that had room: a worker heavier for the item than its holder holds only items heavier on it', () => {
    const random = seededRandom(12);
    for (let round = 0; round < 100; round++) {
      const input = randomMembership(random);
      const answer = evenlyRendezvous(input);
      for (const [holder, held] of Object.entries(answer))
        for (const item of held)
          for (const other of input.workers) {
            if (weight(item, other) <= weight(item, holder)) continue;
            // other was filled before this item's turn on it came: by heavier items only.
            for (const taken of answer[other] as string[])
              expect(
                weight(taken, other) > weight(item, other),
                `${item} on ${holder}, not on ${other} which holds ${taken}`,
              ).toBe(true);
          }
    }
  });

  it("answers as rendezvous where rendezvous's counts already differ by at most one", () => {
    const random = seededRandom(13);
    let even = 0;
    for (let round = 0; round < 400; round++) {
      const input = randomMembership(random);
      const small = {
        ...input,
        items: input.items.slice(0, 8),
        workers: input.workers.slice(0, 4),
      };
      const plain = rendezvous(small);
      if (spread(plain) > 1) continue;
      even += 1;
      expect(evenlyRendezvous(small), JSON.stringify(small)).toEqual(plain);
    }
    expect(even).toBeGreaterThan(50);
  });

  it('every manager computes the same assignment, to the byte, whatever order it sees the workers, the items and the holders in', () => {
    const random = seededRandom(14);
    for (let round = 0; round < 30; round++) {
      const input = randomMembership(random);
      const expected = JSON.stringify(evenlyRendezvous(input));
      for (let order = 0; order < 5; order++)
        expect(JSON.stringify(evenlyRendezvous(reordered(input, random)))).toBe(expected);
      expect(JSON.stringify(evenlyRendezvous({ ...input, current: {} }))).toBe(expected);
    }
  });

  it('assigns nothing without a live worker, and an empty share to each worker of an empty pool', () => {
    expect(evenlyRendezvous({ items: ITEMS, workers: [], current: { gone: ITEMS } })).toEqual({});
    expect(evenlyRendezvous({ items: [], workers: ['b', 'a'], current: {} })).toEqual({
      a: [],
      b: [],
    });
  });

  it('compared with evenly and rendezvous on 3 → 4 → 3 workers: as even as evenly, a few more moves than the fewest, and the 3-worker assignment back when the 4th leaves', () => {
    const strategies = { evenly, rendezvous, evenlyRendezvous } as const;
    // "fewest": the fewest moves that leave counts within one (fewestMoves); spread: the largest
    // count less the smallest.
    const rows: string[] = [
      'items  strategy          3→4 moved (fewest)  4→3 d leaves (fewest)  back as before  4→3 c leaves (fewest)  spread 3 / 4',
    ];
    for (const itemCount of [120, 100]) {
      const items = Array.from({ length: itemCount }, (_, index) => `tenant-${index}`);
      for (const [name, strategy] of Object.entries(strategies)) {
        const threeInput = { items, workers: ['a', 'b', 'c'], current: {} };
        const three = strategy(threeInput);
        const fourInput = { items, workers: ['a', 'b', 'c', 'd'], current: three };
        const four = strategy(fourInput);
        const backInput = { items, workers: ['a', 'b', 'c'], current: four };
        const back = strategy(backInput);
        const cLeavesInput = { items, workers: ['a', 'b', 'd'], current: four };
        const cLeaves = strategy(cLeavesInput);
        const joined = assignmentMoves(three, four).moved;
        const fewestJoined = fewestMoves(fourInput);
        const dLeft = assignmentMoves(four, back).moved;
        const fewestDLeft = fewestMoves(backInput);
        const cLeft = assignmentMoves(four, cLeaves).moved;
        const fewestCLeft = fewestMoves(cLeavesInput);
        const restored = JSON.stringify(back) === JSON.stringify(three);
        rows.push(
          [
            String(itemCount).padEnd(5),
            name.padEnd(16),
            `${joined} (${fewestJoined})`.padEnd(18),
            `${dLeft} (${fewestDLeft})`.padEnd(21),
            (restored ? 'yes' : 'no').padEnd(14),
            `${cLeft} (${fewestCLeft})`.padEnd(21),
            `${spread(three)} / ${spread(four)}`,
          ].join('  '),
        );
        if (strategy === evenlyRendezvous) {
          expect(spread(three)).toBeLessThanOrEqual(1);
          expect(spread(four)).toBeLessThanOrEqual(1);
          expect(joined).toBeLessThanOrEqual(1.5 * fewestJoined);
          expect(cLeft).toBeLessThanOrEqual(1.5 * fewestCLeft);
          expect(back).toEqual(three);
          expect(dLeft).toBe(joined);
        }
        if (strategy === rendezvous) {
          expect(spread(three)).toBeGreaterThan(1);
          expect(spread(four)).toBeGreaterThan(1);
        }
      }
    }
    console.log(rows.join('\n'));
  });

  it('moves close to the fewest when one worker joins with many items per worker, and up to a few times the fewest with few (printed, asserted for 3 → 4)', () => {
    const random = seededRandom(15);
    const rows: string[] = ['workers  items  moved / fewest: mean  worst'];
    for (const workerCount of [2, 3, 8, 20]) {
      for (const itemCount of [100, 1_000]) {
        const ratios: number[] = [];
        for (let round = 0; round < 5; round++) {
          const items = Array.from(
            { length: itemCount },
            (_, index) => `item-${Math.floor(random() * 1_000_000)}-${index}`,
          );
          const workers = Array.from(
            { length: workerCount },
            (_, index) => `worker-${Math.floor(random() * 1_000_000)}-${index}`,
          );
          const before = evenlyRendezvous({ items, workers, current: {} });
          const joinedInput = { items, workers: [...workers, 'newcomer'], current: before };
          const joined = evenlyRendezvous(joinedInput);
          ratios.push(assignmentMoves(before, joined).moved / fewestMoves(joinedInput));
        }
        const mean = ratios.reduce((sum, ratio) => sum + ratio, 0) / ratios.length;
        const worst = Math.max(...ratios);
        rows.push(
          `${`${workerCount} → ${workerCount + 1}`.padEnd(7)}  ${String(itemCount).padEnd(5)}  ${mean.toFixed(2).padStart(26)}  ${worst.toFixed(2)}`,
        );
        if (workerCount === 3) expect(worst).toBeLessThanOrEqual(1.5);
      }
    }
    console.log(rows.join('\n'));
  });

  it('spreads 10 000 items over 50 workers evenly (the time is printed beside rendezvous’s, not asserted)', () => {
    const items = Array.from({ length: 10_000 }, (_, index) => `tenant-${index}`);
    const workers = Array.from({ length: 50 }, (_, index) => `worker-${index}`);
    const rendezvousStartedAt = performance.now();
    rendezvous({ items, workers, current: {} });
    const rendezvousMs = performance.now() - rendezvousStartedAt;
    const startedAt = performance.now();
    const answer = evenlyRendezvous({ items, workers, current: {} });
    const elapsedMs = performance.now() - startedAt;
    console.log(
      `10 000 items over 50 workers: evenlyRendezvous ${Math.round(elapsedMs)} ms, rendezvous ${Math.round(rendezvousMs)} ms`,
    );
    expect(counts(answer)).toEqual(workers.map(() => 200));
    expect(total(answer)).toEqual([...items].sort());
  }, 60_000);
});

describe('assignmentMoves', () => {
  it('tells each worker what to stop and start, and counts only the items that change holder', () => {
    const before = { a: ['i1', 'i2'], b: ['i3'], c: ['i4', 'i9'] };
    // c left, i9 left the pool, i5 is new; i2 goes from a to b.
    const after = { a: ['i1'], b: ['i2', 'i3', 'i4', 'i5'] };
    expect(assignmentMoves(before, after)).toEqual({
      stop: { a: ['i2'], c: ['i4', 'i9'] },
      start: { b: ['i2', 'i4', 'i5'] },
      moved: 2,
    });
    expect(assignmentMoves(after, after)).toEqual({ stop: {}, start: {}, moved: 0 });
    expect(assignmentMoves({ a: ['i1', 'i9'] }, { a: ['i1'] })).toEqual({
      stop: { a: ['i9'] },
      start: {},
      moved: 0,
    });
    expect(assignmentMoves({}, after)).toEqual({
      stop: {},
      start: { a: ['i1'], b: ['i2', 'i3', 'i4', 'i5'] },
      moved: 0,
    });
  });
});

describe('StrategyRegistry', () => {
  it('runs a custom strategy and refuses a wrong answer, naming the strategy', () => {
    const registry = new StrategyRegistry().register('first-takes-all', ({ items, workers }) => ({
      [[...workers].sort()[0] as string]: [...items],
    }));
    expect(
      registry.assign('first-takes-all', { items: ['x', 'y'], workers: ['b', 'a'], current: {} }),
    ).toEqual({ a: ['x', 'y'], b: [] });
    registry.register('twice', ({ items }) => ({ a: [...items], b: [...items] }));
    expect(() =>
      registry.assign('twice', { items: ['x'], workers: ['a', 'b'], current: {} }),
    ).toThrow(/strategy "twice" gave item "x" to two workers/);
    registry.register('lossy', () => ({ a: [] }));
    expect(() => registry.assign('lossy', { items: ['x'], workers: ['a'], current: {} })).toThrow(
      /left items unassigned: x/,
    );
    registry.register('ghost', ({ items }) => ({ zed: [...items] }));
    expect(() => registry.assign('ghost', { items: ['x'], workers: ['a'], current: {} })).toThrow(
      /not a live worker/,
    );
    expect(() => registry.assign('nope', { items: [], workers: [], current: {} })).toThrow(
      InvalidArgumentError,
    );
    expect(() => registry.register('evenly', evenly)).toThrow(/already registered/);
  });

  it('knows evenly, rendezvous and evenlyRendezvous by name', () => {
    const registry = new StrategyRegistry();
    const input = { items: ITEMS, workers: ['b', 'a', 'c'], current: {} };
    expect(
      registry.has('evenly') && registry.has('rendezvous') && registry.has('evenlyRendezvous'),
    ).toBe(true);
    expect(registry.has('by-tenant')).toBe(false);
    expect(registry.assign('evenly', input)).toEqual(evenly(input));
    expect(registry.assign('rendezvous', input)).toEqual(rendezvous(input));
    expect(registry.assign('evenlyRendezvous', input)).toEqual(evenlyRendezvous(input));
  });

  it('registers a strategy under a name of a letter then up to 63 letters, digits, "_", "." or "-", and refuses any other name or a non-function', () => {
    const registry = new StrategyRegistry();
    for (const name of ['a', 'by-tenant_v2.1', `x${'y'.repeat(63)}`])
      expect(registry.register(name, evenly).has(name)).toBe(true);
    // A name that is not a string is refused even when it reads as a good one (['by-tenant'] becomes "by-tenant").
    for (const name of ['', '9lives', '-x', 'by tenant', `x${'y'.repeat(64)}`, 42, ['by-tenant']]) {
      const error = expectThrows(
        () => registry.register(name as string, evenly),
        InvalidArgumentError,
      );
      expect(error.argument).toBe('name');
      expect(error.message).toBe(
        `Invalid name: expected a strategy name such as "by-tenant", got ${JSON.stringify(name)}`,
      );
    }
    const notAFunction = expectThrows(
      () => registry.register('later', 'evenly' as never),
      InvalidArgumentError,
    );
    expect(notAFunction.argument).toBe('strategy');
    expect(notAFunction.message).toBe(
      'Invalid strategy: strategy "later": expected a function ({ items, workers, current }) => { [workerId]: itemIds[] }',
    );
    const again = expectThrows(() => registry.register('a', rendezvous), InvalidArgumentError);
    expect(again.argument).toBe('name');
    expect(again.message).toBe('Invalid name: strategy "a" is already registered');
  });

  it('names the registered strategies when asked for an unknown one', () => {
    const registry = new StrategyRegistry().register('by-tenant', evenly);
    const error = expectThrows(
      () => registry.assign('nope', { items: ['x'], workers: ['a'], current: {} }),
      InvalidArgumentError,
    );
    expect(error.argument).toBe('strategy');
    expect(error.message).toBe(
      'Invalid strategy: no strategy "nope" (registered: evenly, rendezvous, evenlyRendezvous, by-tenant)',
    );
  });

  it('turns a strategy that throws, or answers with a promise, into an error naming it', async () => {
    const input = { items: ['x'], workers: ['a'], current: {} };
    const registry = new StrategyRegistry()
      .register('throws', () => {
        throw new Error('no tenants table');
      })
      .register('throws-text', () => {
        throw 'no tenants table'; // eslint-disable-line @typescript-eslint/only-throw-error -- a strategy may throw anything
      })
      .register('async', (() => Promise.reject(new Error('late'))) as never); // what a JavaScript caller can register
    expect(expectThrows(() => registry.assign('throws', input), InvalidArgumentError).message).toBe(
      'Invalid strategy: strategy "throws" threw: no tenants table',
    );
    expect(
      expectThrows(() => registry.assign('throws-text', input), InvalidArgumentError).message,
    ).toBe('Invalid strategy: strategy "throws-text" threw: no tenants table');
    let unhandled = 0;
    const count = (): void => {
      unhandled += 1;
    };
    process.on('unhandledRejection', count);
    try {
      expect(
        expectThrows(() => registry.assign('async', input), InvalidArgumentError).message,
      ).toBe(
        'Invalid strategy: strategy "async" returned a promise: a strategy decides synchronously',
      );
      await new Promise((resolve) => setTimeout(resolve, 10));
    } finally {
      process.off('unhandledRejection', count);
    }
    expect(unhandled).toBe(0);
  });

  it('refuses an answer that is not each item of the pool held by exactly one live worker, saying what is wrong', () => {
    const input = {
      items: ['i1', 'i2', 'i3', 'i4', 'i5', 'i6', 'i7'],
      workers: ['a', 'b'],
      current: {},
    };
    const problem = (answer: unknown): string => {
      const registry = new StrategyRegistry().register('custom', () => answer as Assignment);
      return expectThrows(
        () => registry.assign('custom', input),
        InvalidArgumentError,
      ).message.replace('Invalid strategy: strategy "custom" ', '');
    };
    for (const answer of [null, [], 'a', 42])
      expect(problem(answer)).toBe('must return { [workerId]: itemIds[] }');
    expect(problem({ a: 'i1' })).toBe('must give "a" an array of item ids');
    expect(problem({ a: input.items, b: [42] })).toBe(
      'gave "b" 42, which is not an item of the pool',
    );
    expect(problem({ a: input.items, b: ['i8'] })).toBe(
      'gave "b" "i8", which is not an item of the pool',
    );
    expect(problem({ a: ['i1', 'i2'] })).toBe('left items unassigned: i3, i4, i5, i6, i7');
    expect(problem({ a: ['i1'] })).toBe('left items unassigned: i2, i3, i4, i5, i6, …');
  });

  it('gives back every live worker in name order, each with its items in order, and accepts no items placed when no worker is live', () => {
    const registry = new StrategyRegistry().register('unsorted', () => ({
      c: ['y', 'x'],
      a: ['z'],
    }));
    const checked = registry.assign('unsorted', {
      items: ['x', 'y', 'z'],
      workers: ['c', 'b', 'a'],
      current: {},
    });
    expect(JSON.stringify(checked)).toBe('{"a":["z"],"b":[],"c":["x","y"]}');
    expect(
      new StrategyRegistry()
        .register('none', () => ({}))
        .assign('none', { items: ['x'], workers: [], current: {} }),
    ).toEqual({});
  });
});

describe('leases', () => {
  const timing = { leaseMs: 3_000, marginMs: 1_000, driftMs: 500 };

  it('a holder stops before the lease it last renewed can have ended; a new one starts after its end plus the drift', () => {
    expect(stopDeadline(10_000, timing)).toBe(12_000);
    const lease = leaseFor('a', 7, 50_000, timing);
    expect(lease).toEqual({ holder: 'a', token: 7, expiresAt: 53_000 });
    expect(takeOver(lease, 'b', 52_000, timing)).toEqual({ wait: 1_500 });
    expect(takeOver(lease, 'b', 53_600, timing)).toEqual({ wait: 0 });
    expect(takeOver({ ...lease, released: true }, 'b', 50_001, timing)).toEqual({ wait: 0 });
    expect(takeOver(undefined, 'b', 0, timing)).toEqual({ wait: 0 });
  });

  it('lets the holder itself take its item again at once', () => {
    const lease = leaseFor('a', 7, 50_000, timing);
    expect(takeOver(lease, 'a', 50_001, timing)).toEqual({ wait: 0 });
    expect(takeOver(lease, 'b', 50_001, timing)).toEqual({ wait: 3_499 });
  });

  it('accepts the edges: no margin or drift, a 300 ms lease, a margin of half the lease', () => {
    expect(leaseProblem({ leaseMs: 3_000, marginMs: 0, driftMs: 0 })).toBeUndefined();
    expect(leaseProblem({ leaseMs: 300, marginMs: 100, driftMs: 0 })).toBeUndefined();
    expect(leaseProblem({ leaseMs: 3_000, marginMs: 1_500, driftMs: 500 })).toBeUndefined();
    expect(leaseProblem({ leaseMs: 299, marginMs: 0, driftMs: 0 })).toBe(
      'leaseMs must be at least 300 ms, got 299',
    );
    expect(leaseProblem({ leaseMs: 3_000, marginMs: 1_501, driftMs: 0 })).toBe(
      'marginMs (1501) must be at most half of leaseMs (3000)',
    );
    expect(leaseProblem({ leaseMs: 3_000, marginMs: 0, driftMs: -1 })).toBe(
      'leaseMs, marginMs and driftMs must be whole, non-negative ms',
    );
  });

  it('refuses timing that leaves no room', () => {
    expect(leaseProblem(timing)).toBeUndefined();
    expect(leaseProblem({ ...timing, marginMs: 2_000 })).toMatch(/at most half/);
    expect(leaseProblem({ ...timing, leaseMs: 100 })).toMatch(/at least 300/);
    expect(leaseProblem({ ...timing, driftMs: 1.5 })).toMatch(/whole/);
  });
});
