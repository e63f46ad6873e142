/** The timeline route's data (issue 25): each task's tries from a plan's view, texts bounded, tasks that never ran left out. */
import { describe, expect, it } from 'vitest';
import type { PlanView, TaskView } from '../../src/plan/plan-view.js';
import { buildTimeline } from '../../src/ui/ui-timeline.js';

const PLAN = '/plans/plan-0000000001';
const at = (ms: number): Date => new Date(ms);
const base = (name: string): TaskView => ({
  task: `${PLAN}/${name}`,
  name,
  state: 'done',
  fn: 'f',
  params: [],
  inputs: [],
  pendingInputs: 0,
  keepResult: false,
});

describe('buildTimeline', () => {
  it("sends each task's tries with epoch times, a failure's code and message cut to 300 characters", () => {
    const view: PlanView = {
      plan: PLAN,
      status: {} as PlanView['status'], // the timeline reads the tasks only
      done: 1,
      historyKept: true,
      tasks: [
        {
          ...base('task-0000000001'),
          tries: [
            {
              attempt: 1,
              outcome: 'failed',
              workerId: 'w/1',
              startedAt: at(10),
              finishedAt: at(20),
              error: { code: 'E', message: 'x'.repeat(1_000) },
            },
            { attempt: 2, outcome: 'done', workerId: 'w/2', startedAt: at(30), finishedAt: at(40) },
          ],
        },
        // An earlier version's record: no list, its last try from the view's worker and times.
        { ...base('task-0000000002'), workerId: 'w/3', startedAt: at(5), finishedAt: at(6) },
        { ...base('task-0000000003'), state: 'waiting' },
      ],
    };
    const timeline = buildTimeline(view, 99);
    expect(timeline.plan).toBe(PLAN);
    expect(timeline.at).toBe(99);
    expect(Object.keys(timeline.tries)).toEqual(['task-0000000001', 'task-0000000002']);
    const [first, second] = timeline.tries['task-0000000001'] ?? [];
    expect(first).toMatchObject({
      attempt: 1,
      outcome: 'failed',
      worker: 'w/1',
      startedAt: 10,
      finishedAt: 20,
    });
    expect(first?.error).toHaveLength(300);
    expect(first?.error?.startsWith('E: xxx')).toBe(true);
    expect(second).toEqual({
      attempt: 2,
      outcome: 'done',
      worker: 'w/2',
      startedAt: 30,
      finishedAt: 40,
    });
    expect(timeline.tries['task-0000000002']).toEqual([
      { attempt: 1, outcome: 'done', worker: 'w/3', startedAt: 5, finishedAt: 6 },
    ]);
  });
});
