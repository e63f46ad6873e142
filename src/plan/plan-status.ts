import type { FailurePolicy } from '../config/plan-options.js';
import type { PlanControlRecord } from '../control/control-record.js';
import type { AttemptRecord, TaskFailure } from '../store/failure-policy.js';
import type { WaitingRecord } from '../store/waiting-record.js';
import type { TaskState } from '../store/task-state.js';
import {
  countPlanTasks,
  countedState,
  planStateOf,
  type PlanCounts,
  type PlanState,
} from './plan-progress.js';

/** One task as read for a status report. */
export interface TaskSnapshot {
  readonly task: string;
  readonly state: TaskState;
  /** Paths of its unmet dep-* nodes. */
  readonly deps: readonly string[];
  /** Paths of the dep-* nodes of dependents that its prov-* nodes point at. */
  readonly feeds: readonly string[];
  readonly failure?: TaskFailure;
  readonly attempts?: AttemptRecord;
  /** Its function's last "not yet" (ctx.notYet), while it waits. */
  readonly waiting?: WaitingRecord;
}

/** A task as its plan's history records it: its node is gone (or going), and the record is final. */
export interface RecordedTask {
  readonly task: string;
  readonly state: 'done' | 'failed' | 'cancelled' | 'unstarted';
  /** Its failure, when it is recorded failed. */
  readonly failure?: TaskFailure;
}

export interface PlanSnapshot {
  readonly plan: string;
  readonly ready: boolean;
  readonly failurePolicy: FailurePolicy;
  /** The plan's priority (its tasks' unless they have their own). */
  readonly priority: number;
  readonly tasks: readonly TaskSnapshot[];
  /** The tasks of the plan's history (none for a plan without one); a task read both live and here counts as recorded. */
  readonly recorded?: readonly RecordedTask[];
  /** Deps with no producer in the snapshot that were checked again and still exist. */
  readonly orphanDeps: ReadonlySet<string>;
  /** The plan's control record, while it is paused or cancelled. */
  readonly control?: PlanControlRecord;
}

/**
 * What `plans.status` reports.
 *
 * @category Plan status
 */
export interface PlanStatus {
  readonly plan: string;
  /** The plan's name (`createPlan(parent, { name })`, a spec's `name`, a schedule's), when it has one. */
  readonly name?: string;
  /** For the child plan of a sub-plan task (`subPlan`): that task's path. */
  readonly subPlanOf?: string;
  readonly state: PlanState;
  readonly failurePolicy: FailurePolicy;
  /** The plan's priority (`createPlan(parent, { priority })`); a task's own overrides it. */
  readonly priority: number;
  /** Tasks per state, and done/remaining/total: from the live tasks and the plan's history (see PlanCounts). */
  readonly counts: PlanCounts;
  /** Tasks that failed for good, with the failure recorded in ZooKeeper (in the task, or in the history of a cancelled plan), and the task's key when it has one. */
  readonly failed: readonly {
    readonly task: string;
    readonly key?: string;
    readonly failure: TaskFailure | undefined;
  }[];
  /** Tasks that can never run: an input comes from a failed (or itself blocked) task, or from no task at all. */
  readonly blocked: readonly {
    readonly task: string;
    readonly key?: string;
    readonly reason: string;
  }[];
  /** Tasks that failed before and will be tried again. */
  readonly retrying: readonly {
    readonly task: string;
    readonly failures: number;
    readonly nextTryAt: Date;
    readonly lastError: string;
  }[];
  /** Who paused or cancelled the plan, when and why (`control.pause`, `control.cancel`); absent while it runs. */
  readonly control?: PlanControlRecord;
}

/** Dep paths whose producer is missing: a dep nobody feeds. Pure: the caller re-checks that they still exist. */
export function unfedDeps(tasks: readonly TaskSnapshot[]): string[] {
  const fed = new Set(tasks.flatMap((task) => task.feeds));
  return tasks.flatMap((task) => task.deps.filter((dep) => !fed.has(dep)));
}

/**
 * Summarises a snapshot (a pure decision): a task is blocked when one of its deps is fed by a
 * failed or blocked task, or by no task at all; a plan has failed when a task failed and either
 * its policy is failFast or nothing that can still run is left.
 */
export function summarizePlan(snapshot: PlanSnapshot): PlanStatus {
  const producerOf = new Map<string, TaskSnapshot>();
  for (const task of snapshot.tasks) for (const dep of task.feeds) producerOf.set(dep, task);
  const blockedReason = new Map<string, string>();
  for (let changed = true; changed;) {
    changed = false;
    for (const task of snapshot.tasks) {
      if (blockedReason.has(task.task) || task.state === 'failed') continue;
      const reason = reasonBlocked(task, producerOf, blockedReason, snapshot.orphanDeps);
      if (reason !== undefined) {
        blockedReason.set(task.task, reason);
        changed = true;
      }
    }
  }
  const recorded = snapshot.recorded ?? [];
  const recordedPaths = new Set(recorded.map(({ task }) => task));
  // A task read live and in the history is finishing, or being deleted by a cancel: its record says where it ended.
  const live = snapshot.tasks.filter((task) => !recordedPaths.has(task.task));
  // What is left of a deletion that stopped half-way, or of a dead builder's unfinished batch, is
  // debris a worker deletes on sight: it never runs, so it neither counts nor keeps the plan open.
  const counted = live.filter((task) => task.state !== 'abandoned');
  const counts = countPlanTasks([
    ...counted.map((task) => ({
      task: task.task,
      state: countedState(task.state, blockedReason.has(task.task)),
    })),
    ...recorded.map(({ task, state }) => ({ task, state })),
  ]);
  const state = planStateOf(
    counts,
    snapshot.ready,
    snapshot.failurePolicy,
    snapshot.control?.state,
  );
  return {
    plan: snapshot.plan,
    state,
    failurePolicy: snapshot.failurePolicy,
    priority: snapshot.priority,
    counts,
    failed: [
      ...live
        .filter((task) => task.state === 'failed')
        .map((task) => ({ task: task.task, failure: task.failure })),
      ...recorded
        .filter((task) => task.state === 'failed')
        .map((task) => ({ task: task.task, failure: task.failure })),
    ],
    blocked: [...blockedReason]
      .filter(([task]) => !recordedPaths.has(task))
      .map(([task, reason]) => ({ task, reason })),
    retrying: live.flatMap((task) =>
      task.state !== 'failed' && task.attempts
        ? [
            {
              task: task.task,
              failures: task.attempts.failures,
              nextTryAt: task.attempts.notBefore,
              lastError: task.attempts.lastFailure.message,
            },
          ]
        : [],
    ),
    ...(snapshot.control !== undefined ? { control: snapshot.control } : {}),
  };
}

function reasonBlocked(
  task: TaskSnapshot,
  producerOf: ReadonlyMap<string, TaskSnapshot>,
  blockedReason: ReadonlyMap<string, string>,
  orphanDeps: ReadonlySet<string>,
): string | undefined {
  for (const dep of task.deps) {
    const producer = producerOf.get(dep);
    if (producer === undefined) {
      if (orphanDeps.has(dep))
        return `its input ${dep} has no producer: no task's prov-* points at it`;
      continue;
    }
    if (producer.state === 'failed') return `its input comes from failed task ${producer.task}`;
    if (blockedReason.has(producer.task))
      return `its input comes from blocked task ${producer.task}`;
  }
  return undefined;
}
