/**
 * The events `alerts.subscribe` reports (a task failed for good, a plan failed, was cancelled, or
 * completed), derived from a plan's status. Pure. Each event has an id that names that very
 * occurrence, so that the cluster can deliver it once (src/alerts/plan-event-watcher.ts): a task
 * that fails again after retryFailed is a new event, the same failure seen twice is not.
 */
import type { PlanStatus } from '../plan/plan-status.js';
import type { PlanCounts } from '../plan/plan-progress.js';
import type { TaskFailure } from '../store/failure-policy.js';

/**
 * What happened: a task failed for good, or its plan failed, was cancelled or completed.
 *
 * @category Events and alerts
 */
export type PlanEventKind = 'task:failed' | 'plan:failed' | 'plan:cancelled' | 'plan:completed';

/**
 * An event `onPlanEvent` delivers once across the cluster: a task failed for good, or a plan
 * failed, was cancelled or completed, with the plan's task counts then.
 *
 * @category Events and alerts
 */
export interface PlanEvent {
  /** Names the occurrence, e.g. `task-failed~task-0000000004~1764000000000`. */
  readonly id: string;
  readonly kind: PlanEventKind;
  readonly plan: string;
  /** The plan's name (`createPlan(parent, { name })`, a spec's `name`, a schedule's), when it has one. */
  readonly planName?: string;
  /** The task, for `task:failed`. */
  readonly task?: string;
  /** The task's key (its spec's, or addTask's `{ key }`), for `task:failed` and, naming its first failed task, `plan:failed`. */
  readonly key?: string;
  /** The failure: of the task (`task:failed`), of the first failed task (`plan:failed`). */
  readonly error?: Pick<TaskFailure, 'type' | 'message' | 'code' | 'attempts' | 'workerId' | 'at'>;
  /** Why, for `plan:cancelled`. */
  readonly reason?: string;
  readonly counts: PlanCounts;
  /** When it happened, as far as ZooKeeper's records tell. */
  readonly at: Date;
}

/** The events a status shows (the caller keeps those already delivered apart by id). */
export function planEventsOf(status: PlanStatus): PlanEvent[] {
  const { plan, counts } = status;
  const planName = status.name !== undefined ? { planName: status.name } : {};
  const events: PlanEvent[] = [];
  for (const { task, key, failure } of status.failed) {
    if (failure === undefined) continue;
    events.push({
      id: `task-failed~${task.slice(task.lastIndexOf('/') + 1)}~${failure.at.getTime()}`,
      kind: 'task:failed',
      plan,
      ...planName,
      task,
      ...(key !== undefined ? { key } : {}),
      error: errorOf(failure),
      counts,
      at: failure.at,
    });
  }
  if (status.state === 'failed') {
    const failures = status.failed.flatMap(({ key, failure }) =>
      failure ? [{ key, failure }] : [],
    );
    const latest = failures.reduce<Date | undefined>(
      (last, { failure }) => (last === undefined || failure.at > last ? failure.at : last),
      undefined,
    );
    const first = failures[0];
    events.push({
      id: `plan-failed~${latest?.getTime() ?? 0}`,
      kind: 'plan:failed',
      plan,
      ...planName,
      ...(first?.key !== undefined ? { key: first.key } : {}),
      ...(first ? { error: errorOf(first.failure) } : {}),
      counts,
      at: latest ?? new Date(),
    });
  }
  if (status.state === 'cancelled') {
    const at = status.control?.at ?? new Date();
    events.push({
      id: `plan-cancelled~${at.getTime()}`,
      kind: 'plan:cancelled',
      plan,
      ...planName,
      ...(status.control?.reason ? { reason: status.control.reason } : {}),
      counts,
      at,
    });
  }
  if (status.state === 'completed')
    events.push({
      id: 'plan-completed',
      kind: 'plan:completed',
      plan,
      ...planName,
      counts,
      at: new Date(),
    });
  return events;
}

function errorOf(failure: TaskFailure): NonNullable<PlanEvent['error']> {
  return {
    type: failure.type,
    message: failure.message,
    code: failure.code,
    attempts: failure.attempts,
    workerId: failure.workerId,
    at: failure.at,
  };
}
