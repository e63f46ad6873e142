/**
 * What a timeline draws of a task: its tries with a start, from its view (`TaskView.tries`), or,
 * for a task whose records keep no list (a plan of an earlier version), its last try from the
 * view's worker and times. Shared by `zk-plan show --timeline` and the web view's timeline route.
 */
import type { PlanView, TaskView } from './plan-view.js';
import type { TaskTry, TaskTryOutcome } from './task-tries-view.js';
import { criticalPath, type CriticalPath } from './critical-path.js';

/** A try as a bar: from `startMs` to `endMs` (epoch ms; a running try ends `now`). */
export interface TimelineBar {
  readonly task: TaskView;
  readonly attempt: number;
  readonly outcome: TaskTryOutcome;
  readonly workerId?: string;
  readonly startMs: number;
  readonly endMs: number;
  readonly error?: string;
}

/** The tries of a task, or its one known try when it has no list; empty when nothing ran. */
export function triesToDraw(task: TaskView): readonly TaskTry[] {
  if (task.tries !== undefined) return task.tries;
  if (task.startedAt === undefined) return [];
  const outcome: TaskTryOutcome | undefined = lastOutcome(task);
  if (outcome === undefined) return [];
  return [
    {
      attempt: (task.failedTries ?? 0) + (outcome === 'failed' ? 0 : 1),
      outcome,
      ...(task.workerId === undefined ? {} : { workerId: task.workerId }),
      startedAt: task.startedAt,
      ...(task.finishedAt === undefined ? {} : { finishedAt: task.finishedAt }),
    },
  ];
}

function lastOutcome(task: TaskView): TaskTryOutcome | undefined {
  switch (task.state) {
    case 'done':
      return 'done';
    case 'skipped':
      return 'skipped';
    case 'running':
    case 'finishing':
      return 'running';
    case 'cancelled':
      return 'cancelled';
    case 'failed':
      return 'failed';
    default:
      return undefined;
  }
}

/**
 * The bars of a task: its tries that have a start (a try that failed before its function started
 * is a bar of no length at its end), running ones ending `now`.
 */
export function barsOf(task: TaskView, now: number): TimelineBar[] {
  return triesToDraw(task).flatMap((entry) => {
    const endMs = entry.finishedAt?.getTime() ?? now;
    const startMs = entry.startedAt?.getTime() ?? endMs;
    if (!Number.isFinite(startMs) || !Number.isFinite(endMs)) return [];
    return [
      {
        task,
        attempt: entry.attempt,
        outcome: entry.outcome,
        ...(entry.workerId === undefined ? {} : { workerId: entry.workerId }),
        startMs,
        endMs: Math.max(startMs, endMs),
        ...(entry.error === undefined
          ? {}
          : { error: `${entry.error.code}: ${entry.error.message}` }),
      },
    ];
  });
}

/** How long a task ran: the sum of its tries' lengths (a running one up to `now`). */
export function runDurationMs(task: TaskView, now: number): number {
  return barsOf(task, now).reduce((sum, bar) => sum + (bar.endMs - bar.startMs), 0);
}

/** The critical path of a plan's view: its tasks by path, each's run duration, through its inputs. */
export function planCriticalPath(view: PlanView, now: number): CriticalPath {
  return criticalPath(
    view.tasks.map((task) => ({
      name: task.task,
      inputs: task.inputs,
      durationMs: runDurationMs(task, now),
    })),
  );
}
