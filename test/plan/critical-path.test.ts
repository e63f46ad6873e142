/** The critical path (issue 25, the timeline): the chain of inputs with the longest run durations' sum. */
import { describe, expect, it } from 'vitest';
import { criticalPath, type PathTask } from '../../src/plan/critical-path.js';

const task = (name: string, durationMs: number, inputs: string[] = []): PathTask => ({
  name,
  inputs,
  durationMs,
});

describe('criticalPath', () => {
  it('takes the chain whose durations add up to the most, not the one with the most tasks', () => {
    // a(10) → b(10) → c(10) → d(5): 35; e(50) → d(5): 55.
    const path = criticalPath([
      task('a', 10),
      task('b', 10, ['a']),
      task('c', 10, ['b']),
      task('e', 50),
      task('d', 5, ['c', 'e']),
    ]);
    expect(path).toEqual({ names: ['e', 'd'], totalMs: 55 });
  });

  it('follows a diamond through its longer side, and ends at the task where the longest chain ends', () => {
    const path = criticalPath([
      task('root', 1),
      task('left', 3, ['root']),
      task('right', 7, ['root']),
      task('join', 2, ['left', 'right']),
      task('lonely', 9),
    ]);
    expect(path).toEqual({ names: ['root', 'right', 'join'], totalMs: 10 });
  });

  it('is empty for no tasks; leaves out unknown inputs, cycles and durations that are no number', () => {
    expect(criticalPath([])).toEqual({ names: [], totalMs: 0 });
    // b adds nothing, yet it ends the chain a starts.
    expect(criticalPath([task('a', 4, ['gone']), task('b', Number.NaN, ['a'])])).toEqual({
      names: ['a', 'b'],
      totalMs: 4,
    });
    // x and y feed each other (a forged list): neither is ever ready, so neither is on the path.
    expect(criticalPath([task('x', 100, ['y']), task('y', 100, ['x']), task('z', 1)])).toEqual({
      names: ['z'],
      totalMs: 1,
    });
  });

  it('handles a chain of 10 000 tasks without recursion', () => {
    const chain = Array.from({ length: 10_000 }, (_, index) =>
      task(`t${index}`, 1, index === 0 ? [] : [`t${index - 1}`]),
    );
    const path = criticalPath(chain);
    expect(path.names).toHaveLength(10_000);
    expect(path.totalMs).toBe(10_000);
  });

  it('takes the whole chain when its tasks took no time: of chains as long, the one of more tasks', () => {
    const path = criticalPath([
      { name: 'a', inputs: [], durationMs: 0 },
      { name: 'b', inputs: ['a'], durationMs: 0 },
      { name: 'c', inputs: ['b'], durationMs: 1 },
    ]);
    expect(path).toEqual({ names: ['a', 'b', 'c'], totalMs: 1 });
  });
});
