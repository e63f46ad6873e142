/**
 * The one place a plan's progress numbers are computed (a pure function): `plans.status`,
 * `plans.describe` and `plans.list`, the `plans`, `show` and `wait` commands and the web view all
 * count through `countPlanTasks`, so they cannot disagree.
 */
import type { FailurePolicy } from '../config/plan-options.js';
import type { TaskState } from '../store/task-state.js';
import type { PlanState, TaskViewState } from './plan-states.js';

export type { PlanState, TaskViewState };

/**
 * A plan's tasks counted by where they stand.
 *
 * @category Plan status
 */
export interface PlanCounts {
  /**
   * Every task of the plan that is known: `done + remaining`. Finished tasks are known from the
   * plan's history, which plans keep unless created with `{ history: false }` (and to a view that
   * saw them go); in a plan without history `done` is 0 and `total` is the tasks left.
   */
  readonly total: number;
  /**
   * Tasks finished (from the plan's history), skipped ones included: a skipped task is done. Which
   * were skipped is in each task's record (`plans.describe`, `show`, the web view); the counts come
   * from the history's names alone, so they stay cheap at every size.
   */
  readonly done: number;
  /** Tasks not done: every state below, failed, blocked and (in a cancelled plan) cancelled and unstarted ones included. */
  readonly remaining: number;
  /** Ready to run, or waiting for their next try. */
  readonly runnable: number;
  readonly running: number;
  readonly waiting: number;
  /** Can never run: an input comes from a failed (or blocked) task, or from no task. */
  readonly blocked: number;
  /** Failed for good. */
  readonly failed: number;
  /** Result stored, being handed on. */
  readonly finishing: number;
  /** Being written (or a deletion that stopped half-way). */
  readonly building: number;
  /** In a cancelled plan: cancelled while running or ready to run (from its history). */
  readonly cancelled: number;
  /** In a cancelled plan: cancelled before they could start (from its history). */
  readonly unstarted: number;
}

/** A task to count: its path (or name), the key that makes it count once, and where it stands. */
export interface CountedTask {
  readonly task: string;
  readonly state: TaskViewState;
}

/** Where a live task stands for counting, from its stored state (retrying counts as runnable). */
export function countedState(state: TaskState, blocked: boolean): TaskViewState {
  if (blocked) return 'blocked';
  switch (state) {
    case 'owned':
      return 'running';
    case 'finishable':
      return 'finishing';
    case 'abandoned':
      return 'building';
    default:
      return state;
  }
}

/** States only a history record gives: once read, they are where the task ended. */
const FINAL_STATES: ReadonlySet<TaskViewState> = new Set([
  'done',
  'skipped',
  'cancelled',
  'unstarted',
]);

/**
 * Counts a plan's tasks. A read of a plan is not atomic: a task that finishes meanwhile can be
 * read both live and in the history (a worker writes the history record before it deletes the
 * task, and so does a cancel). Each task counts once, by its path: as done (or cancelled, or
 * unstarted) when any read says so.
 */
export function countPlanTasks(tasks: Iterable<CountedTask>): PlanCounts {
  const states = new Map<string, TaskViewState>();
  for (const { task, state } of tasks) {
    if (!states.has(task) || FINAL_STATES.has(state)) states.set(task, state);
  }
  const counts = {
    total: states.size,
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
  };
  for (const state of states.values()) {
    if (state === 'done' || state === 'skipped') {
      counts.done += 1;
      continue;
    }
    counts.remaining += 1;
    counts[state === 'retrying' ? 'runnable' : state] += 1;
  }
  return counts;
}

/** Tasks that can still run (or are running): neither done, failed nor blocked. */
export function liveTasks(counts: PlanCounts): number {
  return counts.runnable + counts.running + counts.waiting + counts.finishing + counts.building;
}

/**
 * Where a plan stands from its counts: completed when no task is left; failed when a task failed
 * for good and either the policy is failFast or nothing that can still run is left; building
 * until it is marked ready; else running.
 */
export function planStateOf(
  counts: PlanCounts,
  ready: boolean,
  failurePolicy: FailurePolicy,
  control?: 'paused' | 'cancelled',
): PlanState {
  if (control === 'cancelled') return 'cancelled'; // final, and its tasks are deleted: never "completed"
  if (counts.remaining === 0) return 'completed';
  if (counts.failed > 0 && (failurePolicy === 'failFast' || liveTasks(counts) === 0))
    return 'failed';
  if (control === 'paused') return 'paused';
  return ready ? 'running' : 'building';
}

/** `7/10` for a plan that keeps a history (done out of all), else `3 left`, as `zk-plan plans` shows it (and `wait`). */
export function formatPlanProgress(counts: PlanCounts, historyKept: boolean): string {
  return historyKept ? `${counts.done}/${counts.total}` : `${counts.remaining} left`;
}
