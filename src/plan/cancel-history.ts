/**
 * What control.cancel keeps of the tasks it deletes: a history record for each (src/store/task-history.ts),
 * from where the task stood as read after the cancel's control record. Every record is written
 * before control.cancel deletes any task, and a record is never rewritten, so a cancel cut short at any
 * step and called again (or a second process cancelling the same plan) finds the records of what
 * was deleted and writes only the missing ones. A plan without history gets none.
 */
import type { TaskFailure } from '../store/failure-policy.js';
import type { TaskHistoryRecord } from '../store/task-history.js';
import type { TaskStore } from '../store/task-store.js';
import type { FailedTry } from '../store/task-tries.js';
import type { PlanDescriber } from './plan-describer.js';
import type { TaskView } from './plan-view.js';
import type { Zk } from '../zk/zk.js';
import { failedTriesOf } from './task-tries-view.js';

export class CancelHistory {
  constructor(
    private readonly zk: Zk,
    private readonly store: TaskStore,
    private readonly describer: PlanDescriber,
  ) {}

  /** Records every task of the cancelled plan that has no record yet; `cancelledAt` is the cancel's own time (its control record's). */
  async record(plan: string, cancelledAt: Date): Promise<void> {
    // Decided from reads of this session: a write sent again after a lost reply goes only through it.
    const fence = { fence: this.zk.session };
    const { view, unrecorded } = await this.describer.readPlan(plan);
    if (!view.historyKept) return;
    await Promise.all(
      view.tasks.map(async (task) => {
        const record = unrecorded.has(task.task)
          ? cancelRecord(task, unrecorded.get(task.task) ?? [], cancelledAt)
          : undefined;
        if (record !== undefined) await this.store.keepHistory(task.task, record, fence);
      }),
    );
  }
}

/**
 * The record of a live task of a cancelled plan, from its view: cancelled (it ran or could run),
 * unstarted, or failed; undefined for a view that comes from a record already.
 */
export function cancelRecord(
  task: TaskView,
  outputs: readonly string[],
  cancelledAt: Date,
): TaskHistoryRecord | undefined {
  const base = {
    fn: task.fn,
    params: task.params,
    outputs,
    keepResult: task.keepResult,
    ...(task.key !== undefined ? { key: task.key } : {}),
    failedTries: task.failedTries ?? 0,
    ...withTries(failedTriesOf(task.tries)),
  };
  switch (task.state) {
    case 'running':
      return {
        ...base,
        state: 'cancelled',
        was: 'running',
        cancelledAt,
        ...(task.owner !== undefined
          ? { workerId: task.owner.workerId, startedAt: task.owner.claimedAt }
          : {}),
      };
    case 'finishing':
    case 'runnable':
    case 'retrying':
      return { ...base, state: 'cancelled', was: task.state, cancelledAt };
    case 'failed':
      return {
        ...base,
        state: 'failed',
        failure: task.failure ?? unreadableFailure(task, cancelledAt),
      };
    case 'waiting':
    case 'blocked':
    case 'building':
      return { ...base, state: 'unstarted', was: task.state, cancelledAt };
    case 'done':
    case 'cancelled':
    case 'unstarted':
      return undefined; // states only a record gives: the task has one, never written again
  }
}

/** The failed tries a record keeps (none: no field). */
function withTries(tries: readonly FailedTry[]): { tries?: readonly FailedTry[] } {
  return tries.length > 0 ? { tries } : {};
}

/** A failed task whose `failed` node holds nothing zk-plan can read: recorded failed all the same. */
function unreadableFailure(task: TaskView, at: Date): TaskFailure {
  return {
    type: 'Unknown',
    message: 'its failed node holds no failure zk-plan can read',
    code: 'MALFORMED_NODE',
    stack: undefined,
    retryable: false,
    attempts: task.failedTries ?? 0,
    workerId: '?',
    at,
  };
}
