/**
 * Review of 67c9540: a read that catches a running task half-deleted (no definition, no owner) keeps
 * its state, function and key from the model before (reconcile); its worker and start must stay too,
 * or the node flickers and two needless changes go to every page.
 */
import { describe, expect, it } from 'vitest';
import type { PlanView, TaskView } from '../../src/plan/plan-view.js';
import type { TaskViewState } from '../../src/plan/plan-progress.js';
import { buildModel, diffModels } from '../../src/ui/ui-model.js';

const PLAN = '/plans/plan-0000000001';

function task(serial: number, state: TaskViewState, extra: Partial<TaskView> = {}): TaskView {
  const name = `task-${String(serial).padStart(10, '0')}`;
  return {
    task: `${PLAN}/${name}`,
    name,
    state,
    fn: 'f',
    params: [serial],
    inputs: [],
    pendingInputs: 0,
    keepResult: false,
    ...extra,
  };
}

function view(tasks: TaskView[]): PlanView {
  return {
    plan: PLAN,
    done: 0,
    status: {
      plan: PLAN,
      state: 'running',
      failurePolicy: 'continue',
      priority: 0,
      counts: {
        total: tasks.length,
        done: 0,
        remaining: tasks.length,
        runnable: 0,
        running: 1,
        waiting: 0,
        blocked: 0,
        failed: 0,
        finishing: 0,
        building: 0,
        cancelled: 0,
        unstarted: 0,
      },
      failed: [],
      blocked: [],
      retrying: [],
    },
    tasks,
    historyKept: true,
  };
}

describe('reconcile of a task caught half-deleted', () => {
  it('keeps the worker and start of the running task it keeps the state of', () => {
    const claimedAt = new Date('2026-11-27T10:00:00Z');
    const first = buildModel(view([task(1, 'running', { owner: { workerId: 'w/1', claimedAt } })]));
    const second = buildModel(view([task(1, 'building', { fn: '?' })]), first);

    expect(second.nodes[0]).toMatchObject({
      state: 'running',
      worker: 'w/1',
      startedAt: claimedAt.getTime(),
    });
    expect(diffModels(first, second).changed).toEqual([]);
  });
});
