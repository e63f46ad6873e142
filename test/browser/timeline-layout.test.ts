/**
 * The timeline's layout (issue 25): tries read from the server brought up to date with the live
 * nodes (a try started or ended since the read), rows per worker or per task, a failed try that
 * another followed drawn as retried, the critical path marked.
 */
import { describe, expect, it } from 'vitest';
import { layoutTimeline, mergedTries, tickStep } from '../../src/ui/browser/timeline-layout.js';
import type { UiNode, UiTry } from '../../src/ui/ui-wire.js';

const node = (name: string, extra: Partial<UiNode> = {}): UiNode => ({
  name,
  state: 'done',
  fn: 'f',
  inputs: [],
  ...extra,
});
const failed = (attempt: number, worker: string, startedAt: number, finishedAt: number): UiTry => ({
  attempt,
  outcome: 'failed',
  worker,
  startedAt,
  finishedAt,
  error: 'E: broke',
});

describe('mergedTries', () => {
  it('adds the running try a diff announced, after the failed tries read', () => {
    const running = node('a', { state: 'running', worker: 'w/2', startedAt: 300, failedTries: 1 });
    expect(mergedTries(running, [failed(1, 'w/1', 100, 200)])).toEqual([
      failed(1, 'w/1', 100, 200),
      { attempt: 2, outcome: 'running', worker: 'w/2', startedAt: 300, finishedAt: 0 },
    ]);
  });

  it("ends a try read as running that the node says ended, with the node's end and outcome", () => {
    const read: UiTry[] = [
      { attempt: 1, outcome: 'running', worker: 'w/1', startedAt: 100, finishedAt: 0 },
    ];
    expect(
      mergedTries(node('a', { startedAt: 100, finishedAt: 250, worker: 'w/1' }), read),
    ).toEqual([{ attempt: 1, outcome: 'done', worker: 'w/1', startedAt: 100, finishedAt: 250 }]);
  });

  it('draws a task with nothing read yet from its node, and leaves a task that never started out', () => {
    expect(
      mergedTries(node('a', { startedAt: 10, finishedAt: 20, worker: 'w/1' }), undefined),
    ).toEqual([{ attempt: 1, outcome: 'done', worker: 'w/1', startedAt: 10, finishedAt: 20 }]);
    expect(mergedTries(node('b', { state: 'waiting' }), undefined)).toEqual([]);
  });
});

describe('layoutTimeline', () => {
  const nodes = [
    node('task-1', { key: 'extract', worker: 'w/1', startedAt: 1_000, finishedAt: 1_100 }),
    node('task-2', {
      worker: 'w/1',
      startedAt: 400,
      finishedAt: 500,
      failedTries: 1,
      inputs: ['task-1'],
    }),
    node('task-3', { worker: 'w/2', startedAt: 1_000, finishedAt: 1_050 }),
    node('task-4', { state: 'running', worker: 'w/2', startedAt: 1_600, inputs: ['task-2'] }),
  ];
  const read: Record<string, UiTry[]> = {
    'task-2': [
      failed(1, 'w/2', 1_150, 1_300),
      { attempt: 2, outcome: 'done', worker: 'w/1', startedAt: 1_400, finishedAt: 1_500 },
    ],
  };

  it("lays a bar per try on its worker's row, a retried failure apart from a final one, running bars ending now", () => {
    const layout = layoutTimeline(nodes, read, 'worker', 2_000);
    expect(layout.rows.map((row) => row.label)).toEqual(['w/1', 'w/2']);
    expect(layout.barCount).toBe(5);
    expect(layout.bars[0]?.map((bar) => [bar.name, bar.attempt, bar.outcome])).toEqual([
      ['task-1', 1, 'done'],
      ['task-2', 2, 'done'],
    ]);
    expect(layout.bars[1]?.map((bar) => [bar.name, bar.outcome, bar.endMs])).toEqual([
      ['task-3', 'done', 1_050],
      ['task-2', 'retried', 1_300],
      ['task-4', 'running', 2_000],
    ]);
    expect([layout.startMs, layout.endMs]).toEqual([1_000, 2_000]);
  });

  it('lays a row per task by first start, labelled by key, and marks the critical path by run durations', () => {
    const layout = layoutTimeline(nodes, read, 'task', 2_000);
    expect(layout.rows.map((row) => row.label)).toEqual(['extract', 'task-3', 'task-2', 'task-4']);
    // task-1 (100) → task-2 (150 + 100) → task-4 (400, running): 750. extract and task-3 start together: by name.
    expect(layout.critical).toEqual({ names: ['task-1', 'task-2', 'task-4'], totalMs: 750 });
    expect(
      layout.bars
        .flat()
        .filter((bar) => bar.critical)
        .map((bar) => bar.name),
    ).toEqual(['task-1', 'task-2', 'task-2', 'task-4']);
  });

  it('is empty for a plan where nothing started, and ticks fall on round steps', () => {
    const layout = layoutTimeline([node('a', { state: 'waiting' })], {}, 'worker', 5);
    expect(layout.barCount).toBe(0);
    expect(layout.rows).toEqual([]);
    expect([tickStep(1), tickStep(3), tickStep(7), tickStep(420), tickStep(1_001)]).toEqual([
      1, 5, 10, 500, 2_000,
    ]);
  });
});
