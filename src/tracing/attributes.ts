/**
 * The names of zk-plan's spans and of the attributes they carry (docs/guide/tracing.md lists them).
 * zk-plan's own attributes are namespaced `zk_plan.*`; `error.type` is OpenTelemetry's semantic
 * convention for the class of an error.
 */

/** The span of a plan's submission (createPlan, submitPlan, a schedule's tick): the parent of its attempts. */
export const PLAN_SPAN = 'zk_plan.plan';
/** The span of one try of a task, on the worker that ran it. */
export const ATTEMPT_SPAN = 'zk_plan.task';
/** The span of a schedule's tick being decided (and its plan built) by the scheduler that holds it. */
export const TICK_SPAN = 'zk_plan.schedule.tick';
/** The span of one run of a job's function. */
export const JOB_RUN_SPAN = 'zk_plan.job.run';

export const ATTR_PLAN_PATH = 'zk_plan.plan.path';
export const ATTR_PLAN_NAME = 'zk_plan.plan.name';
/** The path under which the plan was created (createPlan's `parent`). */
export const ATTR_PLANS_PARENT = 'zk_plan.plan.parent';
export const ATTR_TASK_PATH = 'zk_plan.task.path';
export const ATTR_TASK_KEY = 'zk_plan.task.key';
export const ATTR_TASK_FUNCTION = 'zk_plan.task.function';
export const ATTR_TASK_ATTEMPT = 'zk_plan.task.attempt';
/** How the attempt ended: completed, skipped, continued, waiting, failed or given-back. */
export const ATTR_TASK_OUTCOME = 'zk_plan.task.outcome';
/** Why an attempt was given back uncharged (drain, paused, cancelled, plan-failed, session-expired, given-back). */
export const ATTR_TASK_GIVEN_BACK = 'zk_plan.task.given_back';
/** The failure of a failed attempt counts against the task's attempts. */
export const ATTR_TASK_CHARGED = 'zk_plan.task.charged';
/** The task has failed for good with this attempt. */
export const ATTR_TASK_FINAL = 'zk_plan.task.final';
export const ATTR_WORKER_ID = 'zk_plan.worker.id';
export const ATTR_SCHEDULES_PATH = 'zk_plan.schedules.path';
export const ATTR_SCHEDULE_NAME = 'zk_plan.schedule.name';
export const ATTR_TICK = 'zk_plan.schedule.tick';
export const ATTR_TICK_KIND = 'zk_plan.schedule.tick.kind';
/** The state the tick was brought to: fired, skipped or failed. */
export const ATTR_TICK_STATE = 'zk_plan.schedule.tick.state';
export const ATTR_JOBS_PATH = 'zk_plan.jobs.path';
export const ATTR_JOB_NAME = 'zk_plan.job.name';
/** The ids of the items of the share the run ran for. */
export const ATTR_JOB_ITEMS = 'zk_plan.job.items';
export const ATTR_JOB_CAUSE = 'zk_plan.job.cause';
/** The try of one due run, 1 for the first. */
export const ATTR_JOB_TRY = 'zk_plan.job.try';
/** How the run ended: succeeded, failed or aborted. */
export const ATTR_JOB_OUTCOME = 'zk_plan.job.outcome';
/** OpenTelemetry semantic convention: the class of an error (zk-plan's error code, else the error's name). */
export const ATTR_ERROR_TYPE = 'error.type';

/**
 * The longest string attribute value written. Paths, keys and names are bounded where they are
 * made, but a task's function name is read from a node anyone may write.
 */
export const MAX_ATTRIBUTE_CHARS = 1_024;
