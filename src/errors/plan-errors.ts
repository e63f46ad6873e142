import { ZkPlanError, named } from './base-error.js';

/** Thrown by `addTask` when an arg task does not exist, or was removed because it already completed. */
export class ArgTaskNotFoundError extends ZkPlanError {
  readonly code = 'ARG_TASK_NOT_FOUND';
  constructor(argTask: string, detail: string) {
    super(`Arg task ${argTask} ${detail}`, { path: argTask });
  }
}
named(ArgTaskNotFoundError, 'ArgTaskNotFoundError');

/** Thrown by `addTask` when an arg task belongs to another plan than the task being added. */
export class ForeignArgTaskError extends ZkPlanError {
  readonly code = 'ARG_TASK_IN_OTHER_PLAN';
  constructor(argTask: string, plan: string) {
    super(`Arg task ${argTask} is not in plan ${plan}: a task can only depend on tasks of its own plan`, { path: argTask });
  }
}
named(ForeignArgTaskError, 'ForeignArgTaskError');

/** Thrown when a plan path does not exist (never created, or deleted). */
export class PlanNotFoundError extends ZkPlanError {
  readonly code = 'PLAN_NOT_FOUND';
  constructor(plan: string) {
    super(`Plan ${plan} does not exist: create it with createPlan(parent) and use the path it returns`, { path: plan });
  }
}
named(PlanNotFoundError, 'PlanNotFoundError');

/** Thrown by `getResult` when no kept result exists for the task. */
export class ResultNotFoundError extends ZkPlanError {
  readonly code = 'RESULT_NOT_FOUND';
  constructor(task: string, resultPath: string) {
    super(
      `No kept result for task ${task} at ${resultPath}: the task has not completed yet, or it was added without { keepResult: true }`,
      { path: resultPath },
    );
  }
}
named(ResultNotFoundError, 'ResultNotFoundError');
