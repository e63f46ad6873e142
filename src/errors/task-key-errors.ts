import { ZkPlanError, named } from './base-error.js';

/**
 * Thrown by `addTask` and `addTasks` when a task is given a key another task of the plan has: one
 * of its spec, an earlier `addTask`, or another of the same batch. `holder` is that task's path when
 * it is known (a task of the same batch has none yet). Nothing of the batch is left in the plan.
 *
 * @category Errors
 */
export class DuplicateTaskKeyError extends ZkPlanError {
  readonly code = 'TASK_KEY_TAKEN';
  constructor(
    readonly plan: string,
    readonly key: string,
    readonly holder?: string,
  ) {
    super(
      `Task key "${key}" is already taken in plan ${plan}${holder === undefined ? ' (by another task of the same batch)' : ` by ${holder}`}: give each task of a plan its own key`,
      { path: holder ?? plan },
    );
  }
}
named(DuplicateTaskKeyError, 'DuplicateTaskKeyError');

/**
 * Thrown when a plan has no task with the key asked for (`zkPlan.taskOfKey`, `zk-plan why <plan> <key>`).
 *
 * @category Errors
 */
export class TaskKeyNotFoundError extends ZkPlanError {
  readonly code = 'TASK_KEY_NOT_FOUND';
  constructor(
    readonly plan: string,
    readonly key: string,
  ) {
    super(
      `Plan ${plan} has no task with the key "${key}": describePlan(plan) lists each task with its key`,
      { path: plan },
    );
  }
}
named(TaskKeyNotFoundError, 'TaskKeyNotFoundError');
