import { describe, expect, it } from 'vitest';
import {
  MIN_GROUP_SIZE,
  barSegments,
  countsSummary,
  groupTasks,
  mainState,
  stateCounts,
  type GroupableNode,
} from '../../src/ui/browser/graph-groups.js';
import { TASK_VIEW_STATES, type TaskViewState } from '../../src/ui/ui-wire.js';

const name = (serial: number): string => `task-${String(serial).padStart(10, '0')}`;
const t = (serial: number, fn: string, inputs: number[] = []): GroupableNode => ({
  name: name(serial),
  fn,
  inputs: inputs.map(name),
});
const range = (from: number, count: number): number[] =>
  Array.from({ length: count }, (_, i) => from + i);

function counts(values: Partial<Record<TaskViewState, number>>): Record<TaskViewState, number> {
  return Object.fromEntries(TASK_VIEW_STATES.map((state) => [state, values[state] ?? 0])) as Record<
    TaskViewState,
    number
  >;
}

describe('grouping of repeated shapes', () => {
  it('groups a fan-out of tasks with the same function, inputs and dependents', () => {
    // 1 → 2..21 (map) → 22 (reduce)
    const nodes = [
      t(1, 'list'),
      ...range(2, 20).map((serial) => t(serial, 'map', [1])),
      t(22, 'reduce', range(2, 20)),
    ];
    const { groups, groupOf } = groupTasks(nodes);
    expect(groups).toEqual([
      { id: `group:${name(2)}`, fn: 'map', members: range(2, 20).map(name) },
    ]);
    expect(groupOf.get(name(2))).toBe(`group:${name(2)}`);
    expect(groupOf.get(name(21))).toBe(`group:${name(2)}`);
    expect(groupOf.has(name(1))).toBe(false);
    expect(groupOf.has(name(22))).toBe(false);
  });

  it('keeps apart tasks that differ in function, in inputs or in dependents', () => {
    const fanOut = range(2, 10);
    const nodes = [
      t(1, 'list'),
      t(100, 'other-source'),
      ...fanOut.map((serial) => t(serial, 'map', [1])),
      // Same function, other input.
      ...range(20, 10).map((serial) => t(serial, 'map', [100])),
      // Same input, other function.
      ...range(40, 10).map((serial) => t(serial, 'score', [1])),
      // Same function and input, but one of them feeds a task of its own.
      ...range(60, 10).map((serial) => t(serial, 'audit', [1])),
      t(80, 'follow-up', [60]),
    ];
    const { groups } = groupTasks(nodes);
    expect(groups.map((group) => [group.fn, group.members.length])).toEqual([
      ['map', 10],
      ['map', 10],
      ['score', 10],
      ['audit', 9],
    ]);
    expect(groups[3]?.members).not.toContain(name(60));
  });

  it('needs at least MIN_GROUP_SIZE similar tasks, and ignores inputs that are not drawn and repeated inputs', () => {
    const few = range(2, MIN_GROUP_SIZE - 1).map((serial) => t(serial, 'map', [1]));
    expect(groupTasks([t(1, 'list'), ...few]).groups).toEqual([]);
    const nodes = [
      t(1, 'list'),
      ...range(2, MIN_GROUP_SIZE).map((serial) =>
        // One of them names a task that is not drawn (gone from the plan), and its input twice.
        serial === 2 ? t(serial, 'map', [1, 1, 999]) : t(serial, 'map', [1]),
      ),
    ];
    expect(groupTasks(nodes).groups).toHaveLength(1);
    expect(groupTasks(nodes, MIN_GROUP_SIZE + 1).groups).toEqual([]);
  });

  it('groups tasks with no inputs and no dependents by function alone, in the order given', () => {
    const nodes = [
      ...range(1, 8).map((serial) => t(serial, 'b')),
      ...range(20, 8).map((serial) => t(serial, 'a')),
    ];
    expect(groupTasks(nodes).groups.map((group) => group.fn)).toEqual(['b', 'a']);
  });

  it('does not group a layered plan whose tasks each have inputs of their own', () => {
    // Each task of a layer reads two distinct tasks of the layer before (the web view test's 1 000-task plan).
    const nodes = range(0, 300).map((i) => {
      const layer = Math.floor(i / 100);
      return t(
        i,
        'f',
        layer === 0
          ? []
          : [(layer - 1) * 100 + ((i * 7) % 100), (layer - 1) * 100 + ((i * 13 + 5) % 100)],
      );
    });
    expect(groupTasks(nodes).groups).toEqual([]);
  });
});

describe("a group's counts", () => {
  it('counts members per state', () => {
    const states = new Map<string, { state: TaskViewState }>([
      ['a', { state: 'done' }],
      ['b', { state: 'done' }],
      ['c', { state: 'failed' }],
    ]);
    expect(stateCounts(['a', 'b', 'c', 'unknown'], states)).toEqual(counts({ done: 2, failed: 1 }));
  });

  it('draws a stacked bar whose pieces meet, end at its width, and show a lone state', () => {
    const segments = barSegments(counts({ waiting: 998, running: 1, failed: 1 }), 100);
    expect(segments.map((segment) => segment.state)).toEqual(['waiting', 'running', 'failed']);
    expect(segments[0]?.x).toBe(0);
    for (let i = 1; i < segments.length; i++) {
      const before = segments[i - 1];
      expect(segments[i]?.x).toBe((before?.x ?? 0) + (before?.width ?? 0));
    }
    const last = segments[segments.length - 1];
    expect((last?.x ?? 0) + (last?.width ?? 0)).toBe(100);
    for (const segment of segments) expect(segment.width).toBeGreaterThanOrEqual(1);
    expect(barSegments(counts({ done: 1, failed: 1 }), 100)).toEqual([
      { state: 'done', x: 0, width: 50 },
      { state: 'failed', x: 50, width: 50 },
    ]);
    expect(barSegments(counts({}), 100)).toEqual([]);
  });

  it('names its biggest state and sums up the rest', () => {
    expect(mainState(counts({ done: 3, failed: 5 }))).toBe('failed');
    expect(mainState(counts({ done: 2, running: 2 }))).toBe('running'); // the legend's order on a tie
    expect(countsSummary(counts({ done: 7, failed: 2, running: 1, waiting: 1 }))).toBe(
      '7 done · 2 failed · 2 other',
    );
    expect(countsSummary(counts({ waiting: 1500 }))).toBe('1500 waiting');
  });
});
