import { ZkPlanError, named } from './base-error.js';

/**
 * Thrown by `addTask` when an arg task does not exist, or was removed because it already completed.
 *
 * @category Errors
 */
export class ArgTaskNotFoundError extends ZkPlanError {
  readonly code = 'ARG_TASK_NOT_FOUND';
  constructor(argTask: string, detail: string) {
    super(`Arg task ${argTask} ${detail}`, { path: argTask });
  }
}
named(ArgTaskNotFoundError, 'ArgTaskNotFoundError');

/**
 * Thrown by `addTask` when an arg task belongs to another plan than the task being added.
 *
 * @category Errors
 */
export class ForeignArgTaskError extends ZkPlanError {
  readonly code = 'ARG_TASK_IN_OTHER_PLAN';
  constructor(argTask: string, plan: string) {
    super(
      `Arg task ${argTask} is not in plan ${plan}: a task can only depend on tasks of its own plan`,
      { path: argTask },
    );
  }
}
named(ForeignArgTaskError, 'ForeignArgTaskError');

/**
 * Thrown when a plan path does not exist (never created, or deleted).
 *
 * @category Errors
 */
export class PlanNotFoundError extends ZkPlanError {
  readonly code = 'PLAN_NOT_FOUND';
  constructor(plan: string) {
    super(
      `Plan ${plan} does not exist: create it with createPlan(parent) and use the path it returns`,
      { path: plan },
    );
  }
}
named(PlanNotFoundError, 'PlanNotFoundError');

/**
 * Thrown by `addTask` and `addTasks` (and so by `submitPlan`, a schedule's tick, `ctx.spawn`) when
 * the tasks would take the plan's child listing past `jute.maxbuffer` (`juteMaxBufferBytes`): Java
 * clients such as zkCli.sh and Curator-based tools could no longer list the plan. Nothing of the
 * batch is written.
 *
 * @category Errors
 */
export class PlanTooLargeError extends ZkPlanError {
  readonly code = 'PLAN_TOO_LARGE';
  constructor(
    plan: string,
    readonly children: number,
    readonly adding: number,
    readonly limit: number,
    juteMaxBufferBytes: number,
  ) {
    super(
      `Plan ${plan} holds ${children} nodes; ${adding} more would pass the ${limit} its child listing can hold under jute.maxbuffer = ${juteMaxBufferBytes} bytes, past which Java clients (zkCli.sh, Curator-based tools) can no longer list it: split the work into sub-plans (subPlan) or several plans, or raise jute.maxbuffer on the servers and every Java client and tell zk-plan (juteMaxBufferBytes in ZkPlan.connect; --jute-max-buffer-bytes or ZK_PLAN_JUTE_MAX_BUFFER_BYTES for the zk-plan command)`,
      { path: plan },
    );
  }
}
named(PlanTooLargeError, 'PlanTooLargeError');

/**
 * Thrown by `getResult` when no kept result exists for the task.
 *
 * @category Errors
 */
export class ResultNotFoundError extends ZkPlanError {
  readonly code = 'RESULT_NOT_FOUND';
  constructor(task: string, resultPath: string) {
    super(
      `No kept result for task ${task} at ${resultPath}: the task has not completed yet, or it was added without { keepResult: true }`,
      {
        path: resultPath,
      },
    );
  }
}
named(ResultNotFoundError, 'ResultNotFoundError');

/**
 * The reason a running task's signal is aborted when another task of its failFast plan failed for good.
 *
 * @category Errors
 */
export class PlanAbortedError extends ZkPlanError {
  readonly code = 'PLAN_ABORTED';
  constructor(plan: string, task: string) {
    super(`Task ${task} was aborted: its plan ${plan} failed and its failure policy is failFast`, {
      path: task,
    });
  }
}
named(PlanAbortedError, 'PlanAbortedError');

/**
 * The signal reason of a running task whose plan was deleted: the worker drops it quietly.
 *
 * @category Errors
 */
export class PlanDeletedError extends ZkPlanError {
  readonly code = 'PLAN_DELETED';
  constructor(plan: string, task: string) {
    super(`Task ${task} was aborted: its plan ${plan} was deleted`, { path: task });
  }
}
named(PlanDeletedError, 'PlanDeletedError');

/**
 * `control.pause` or `control.cancel` of a plan that has already finished: it completed (no task left), or
 * it failed (a task failed for good and nothing that can still run is left, or its policy is
 * failFast). Nothing would be paused or cancelled, and a finished plan keeps the state it ended in.
 *
 * @category Errors
 */
export class PlanFinishedError extends ZkPlanError {
  readonly code = 'PLAN_FINISHED';
  constructor(
    readonly plan: string,
    readonly state: 'completed' | 'failed',
    readonly action: 'pause' | 'cancel',
  ) {
    super(
      state === 'completed'
        ? `Plan ${plan} has already completed: there is nothing left to ${action}`
        : `Plan ${plan} has already failed: there is nothing left to ${action} (retry its failed tasks to run it again)`,
      { path: plan },
    );
  }
}
named(PlanFinishedError, 'PlanFinishedError');

/**
 * A plan was cancelled (`control.cancel`): `waitForCompletion` rejects with it, and a running task of
 * the plan has its signal aborted with it. Terminal: the plan never runs again.
 *
 * @category Errors
 */
export class PlanCancelledError extends ZkPlanError {
  readonly code = 'PLAN_CANCELLED';
  constructor(
    readonly plan: string,
    readonly reason: string | undefined,
    task?: string,
  ) {
    super(
      task === undefined
        ? `Plan ${plan} was cancelled${reason ? `: ${reason}` : ''}; it does not run again (create a new plan to run its work)`
        : `Task ${task} was aborted: its plan ${plan} was cancelled${reason ? `: ${reason}` : ''}`,
      { path: task ?? plan },
    );
  }
}
named(PlanCancelledError, 'PlanCancelledError');

/**
 * The signal reason of a running task whose plan was paused with `{ abortRunning: true }`: given back uncharged, it runs again after control.resume.
 *
 * @category Errors
 */
export class PlanPausedError extends ZkPlanError {
  readonly code = 'PLAN_PAUSED';
  constructor(plan: string, task: string) {
    super(
      `Task ${task} was aborted: its plan ${plan} was paused (it runs again, uncharged, once the plan is resumed)`,
      { path: task },
    );
  }
}
named(PlanPausedError, 'PlanPausedError');

/**
 * A task of a plan's status report that failed for good, with the failure recorded in ZooKeeper.
 *
 * @category Errors
 */
export interface FailedTaskReport {
  readonly task: string;
  /** The task's key, when it has one. */
  readonly key?: string;
  readonly failure: unknown;
}

/**
 * Thrown by `waitForCompletion` when the plan has failed: lists the failed tasks and those blocked forever.
 *
 * @category Errors
 */
export class PlanFailedError extends ZkPlanError {
  readonly code = 'PLAN_FAILED';
  constructor(
    plan: string,
    readonly failedTasks: readonly FailedTaskReport[],
    readonly blockedTasks: readonly string[],
  ) {
    const what = `Plan ${plan} failed: ${failedTasks.length} task(s) failed for good (${failedTasks
      .slice(0, 3)
      .map(
        ({ task, key, failure }) =>
          `${key === undefined ? task : `${key} (${task})`}: ${(failure as { message?: string } | undefined)?.message ?? 'unknown error'}`,
      )
      .join(
        '; ',
      )}${failedTasks.length > 3 ? '; …' : ''}), ${blockedTasks.length} blocked behind them. Fix the cause, then`;
    super(`${what} retryFailed(plan) to run them again`, {
      path: plan,
      cliMessage: `${what} zk-plan retry ${plan} runs them again`,
    });
  }
}
named(PlanFailedError, 'PlanFailedError');
