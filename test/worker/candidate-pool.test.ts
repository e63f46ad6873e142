import { describe, expect, it } from 'vitest';
import { CandidatePool } from '../../src/worker/candidate-pool.js';

const plan = '/plans/plan-0000000001';
const other = '/plans/plan-0000000002';
const task = (p: string, n: number): string => `${p}/task-${String(n).padStart(10, '0')}`;

describe('the candidates of a worker process', () => {
  it('adds, removes and keeps one entry per task', () => {
    const pool = new CandidatePool();
    pool.add(task(plan, 1), 'index');
    pool.add(task(plan, 1), 'index');
    pool.add(task(plan, 2), 'offered');
    expect(pool.size).toBe(2);
    expect(pool.delete(task(plan, 1))).toBe(true);
    expect(pool.delete(task(plan, 1))).toBe(false);
    expect(pool.all()).toEqual([task(plan, 2)]);
  });

  it('drops what a later listing no longer names, but not what it could not have seen or what this process offered', () => {
    const pool = new CandidatePool();
    pool.add(task(plan, 1), 'index');
    pool.add(task(plan, 2), 'index');
    pool.add(task(plan, 3), 'offered');
    pool.add(task(other, 4), 'index');
    const sentAt = pool.now();
    pool.add(task(plan, 5), 'index'); // added after the listing was sent: it may not name it yet
    pool.reconcile(plan, new Set([task(plan, 2)]), sentAt);
    expect(new Set(pool.all())).toEqual(
      new Set([task(plan, 2), task(plan, 3), task(other, 4), task(plan, 5)]),
    );
  });

  it('an index candidate offered by this process becomes an offered one', () => {
    const pool = new CandidatePool();
    pool.add(task(plan, 1), 'index');
    pool.add(task(plan, 1), 'offered');
    pool.add(task(plan, 1), 'index');
    expect(pool.sourceOf(task(plan, 1))).toBe('offered');
    pool.reconcile(plan, new Set(), pool.now());
    expect(pool.has(task(plan, 1))).toBe(true);
  });

  it('forgets a plan', () => {
    const pool = new CandidatePool();
    for (let n = 0; n < 5; n++) pool.add(task(plan, n), 'index');
    pool.add(task(other, 9), 'index');
    pool.forgetPlan(plan);
    expect(pool.all()).toEqual([task(other, 9)]);
  });

  it('picks a usable candidate, also when random draws keep hitting unusable ones', () => {
    const pool = new CandidatePool();
    for (let n = 0; n < 100; n++) pool.add(task(plan, n), 'index');
    const only = task(plan, 77);
    expect(
      pool.pickRandom(
        (t) => t === only,
        () => 0,
      ),
    ).toBe(only);
    expect(pool.pickRandom(() => false, Math.random)).toBeUndefined();
    expect(new CandidatePool().pickRandom(() => true, Math.random)).toBeUndefined();
  });

  it('spreads picks over every candidate', () => {
    const pool = new CandidatePool();
    for (let n = 0; n < 10; n++) pool.add(task(plan, n), 'index');
    const seen = new Set<string>();
    for (let i = 0; i < 500; i++) seen.add(pool.pickRandom(() => true, Math.random) as string);
    expect(seen.size).toBe(10);
  });

  it('a pick costs a few draws, not a look at every candidate, when most are usable', () => {
    const pool = new CandidatePool();
    for (let n = 0; n < 100_000; n++) pool.add(task(plan, n), 'index');
    let looked = 0;
    for (let i = 0; i < 1000; i++)
      pool.pickRandom(() => {
        looked += 1;
        return true;
      }, Math.random);
    expect(looked).toBe(1000);
  });
});
