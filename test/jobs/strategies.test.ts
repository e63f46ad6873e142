import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../../src/errors/usage-errors.js';
import { assignmentMoves, evenly, rendezvous, StrategyRegistry, type Assignment } from '../../src/jobs/strategies.js';
import { leaseFor, leaseProblem, stopDeadline, takeOver } from '../../src/jobs/lease.js';

const ITEMS = Array.from({ length: 12 }, (_, index) => `mailbox-${String(index).padStart(2, '0')}`);
const counts = (assignment: Assignment): number[] => Object.values(assignment).map((items) => items.length);
const total = (assignment: Assignment): string[] => Object.values(assignment).flat().sort();

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
    expect(Object.values(assignmentMoves(four, back).start).flat().sort()).toEqual([...(four['c'] as string[])].sort());
  });

  it('keeps counts within one for any pool and membership, items from a changed pool included', () => {
    for (let workers = 1; workers <= 7; workers++) {
      for (let items = 0; items <= 20; items++) {
        const ids = ITEMS.concat(ITEMS.map((item) => `${item}-b`)).slice(0, items);
        const names = Array.from({ length: workers }, (_, index) => `w${index}`);
        const assignment = evenly({ items: ids, workers: names, current: { w0: ['gone', ...ids.slice(0, 5)] } });
        expect(Math.max(...counts(assignment)) - Math.min(...counts(assignment))).toBeLessThanOrEqual(1);
        expect(total(assignment)).toEqual([...ids].sort());
      }
    }
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
});

describe('StrategyRegistry', () => {
  it('runs a custom strategy and refuses a wrong answer, naming the strategy', () => {
    const registry = new StrategyRegistry().register('first-takes-all', ({ items, workers }) => ({ [[...workers].sort()[0] as string]: [...items] }));
    expect(registry.assign('first-takes-all', { items: ['x', 'y'], workers: ['b', 'a'], current: {} })).toEqual({ a: ['x', 'y'], b: [] });
    registry.register('twice', ({ items }) => ({ a: [...items], b: [...items] }));
    expect(() => registry.assign('twice', { items: ['x'], workers: ['a', 'b'], current: {} })).toThrow(/strategy "twice" gave item "x" to two workers/);
    registry.register('lossy', () => ({ a: [] }));
    expect(() => registry.assign('lossy', { items: ['x'], workers: ['a'], current: {} })).toThrow(/left items unassigned: x/);
    registry.register('ghost', ({ items }) => ({ zed: [...items] }));
    expect(() => registry.assign('ghost', { items: ['x'], workers: ['a'], current: {} })).toThrow(/not a live worker/);
    expect(() => registry.assign('nope', { items: [], workers: [], current: {} })).toThrow(InvalidArgumentError);
    expect(() => registry.register('evenly', evenly)).toThrow(/already registered/);
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

  it('refuses timing that leaves no room', () => {
    expect(leaseProblem(timing)).toBeUndefined();
    expect(leaseProblem({ ...timing, marginMs: 2_000 })).toMatch(/at most half/);
    expect(leaseProblem({ ...timing, leaseMs: 100 })).toMatch(/at least 300/);
    expect(leaseProblem({ ...timing, driftMs: 1.5 })).toMatch(/whole/);
  });
});
