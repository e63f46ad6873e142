import { describe, expect, it } from 'vitest';
import {
  countPlanTasks,
  countedState,
  formatPlanProgress,
  planStateOf,
  type CountedTask,
} from '../../src/plan/plan-progress.js';
import type { TaskViewState } from '../../src/plan/plan-progress.js';

const PLAN = '/plans/plan-0000000001';
const task = (serial: number, state: TaskViewState): CountedTask => ({
  task: `${PLAN}/task-${String(serial).padStart(10, '0')}`,
  state,
});

describe('countPlanTasks: the one count of a plan', () => {
  it('counts every state once, done and remaining adding up to the total', () => {
    const counts = countPlanTasks([
      task(1, 'done'),
      task(2, 'done'),
      task(3, 'running'),
      task(4, 'finishing'),
      task(5, 'runnable'),
      task(6, 'retrying'),
      task(7, 'waiting'),
      task(8, 'building'),
      task(9, 'failed'),
      task(10, 'blocked'),
      task(11, 'skipped'),
    ]);
    expect(counts).toEqual({
      total: 11,
      done: 3,
      remaining: 8,
      runnable: 2,
      running: 1,
      waiting: 1,
      blocked: 1,
      failed: 1,
      finishing: 1,
      building: 1,
      cancelled: 0,
      unstarted: 0,
    });
  });

  it('counts the tasks of a cancelled plan from its history: a record wins over what is left of the task, and they are not done', () => {
    const counts = countPlanTasks([
      task(1, 'done'),
      task(2, 'running'),
      task(2, 'cancelled'),
      task(3, 'unstarted'),
      task(3, 'waiting'),
      task(4, 'failed'),
    ]);
    expect(counts).toMatchObject({
      total: 4,
      done: 1,
      remaining: 3,
      cancelled: 1,
      unstarted: 1,
      failed: 1,
      running: 0,
      waiting: 0,
    });
  });

  it('counts a task read both live (finishing) and in the history once, as done: the totals of 22 and 23 for 21 tasks', () => {
    const history = Array.from({ length: 13 }, (_, index) => task(index + 1, 'done'));
    const live = [
      task(13, 'finishing'),
      task(12, 'running'),
      ...Array.from({ length: 8 }, (_, index) => task(index + 14, 'waiting')),
    ];
    const counts = countPlanTasks([...live, ...history]);
    expect(counts).toMatchObject({
      total: 21,
      done: 13,
      remaining: 8,
      running: 0,
      finishing: 0,
      waiting: 8,
    });
    expect(countPlanTasks([...history, ...live])).toEqual(counts); // whatever the order of the reads
  });

  it('gives an empty plan zeros', () => {
    expect(countPlanTasks([])).toEqual({
      total: 0,
      done: 0,
      remaining: 0,
      runnable: 0,
      running: 0,
      waiting: 0,
      blocked: 0,
      failed: 0,
      finishing: 0,
      building: 0,
      cancelled: 0,
      unstarted: 0,
    });
  });
});

describe('countedState', () => {
  it('maps stored states to what is shown, blocked first', () => {
    expect(countedState('owned', false)).toBe('running');
    expect(countedState('finishable', false)).toBe('finishing');
    expect(countedState('abandoned', false)).toBe('building');
    expect(countedState('runnable', false)).toBe('runnable');
    expect(countedState('waiting', true)).toBe('blocked');
  });
});

describe('planStateOf', () => {
  const counts = (tasks: CountedTask[]) => countPlanTasks(tasks);
  it('is completed once nothing remains, even when done tasks are counted', () => {
    expect(planStateOf(counts([task(1, 'done')]), true, 'continue')).toBe('completed');
    expect(planStateOf(counts([]), false, 'continue')).toBe('completed');
  });

  it('is failed when a task failed and nothing can run any more, or at once with failFast', () => {
    expect(
      planStateOf(
        counts([task(1, 'failed'), task(2, 'blocked'), task(3, 'done')]),
        true,
        'continue',
      ),
    ).toBe('failed');
    expect(planStateOf(counts([task(1, 'failed'), task(2, 'running')]), true, 'continue')).toBe(
      'running',
    );
    expect(planStateOf(counts([task(1, 'failed'), task(2, 'running')]), true, 'failFast')).toBe(
      'failed',
    );
  });

  it('is building until marked ready', () => {
    expect(planStateOf(counts([task(1, 'runnable')]), false, 'continue')).toBe('building');
  });
});

describe('formatPlanProgress', () => {
  it('shows done/total for a plan with history, also before it started (not "21 left")', () => {
    const notStarted = countPlanTasks(
      Array.from({ length: 21 }, (_, index) => task(index + 1, 'runnable')),
    );
    expect(formatPlanProgress(notStarted, true)).toBe('0/21');
    expect(formatPlanProgress(notStarted, false)).toBe('21 left');
  });
});
