import { ZkPlanError, named } from './base-error.js';

/**
 * No job of that name under the jobs' parent.
 *
 * @category Errors
 */
export class JobNotFoundError extends ZkPlanError {
  readonly code = 'JOB_NOT_FOUND';
  constructor(path: string) {
    super(
      `Job ${path} does not exist: define it with jobs(parent).define({ name, fn, workPool, mode }) (list them with jobs(parent).list())`,
      { path },
    );
  }
}
named(JobNotFoundError, 'JobNotFoundError');

/**
 * What a jobs' call cannot do with the job as it is (the contract: these codes are stable).
 *
 * @category Errors
 */
export type JobProblem =
  /** `setWorkPool` of a job whose pool is shards, not named items. */
  | 'JOB_POOL_IS_SHARDS'
  /** `trigger` of a continuous job (it runs all the time). */
  | 'JOB_CONTINUOUS'
  /** `remove` timed out with items still held (their workers have not given them back). */
  | 'JOB_STILL_HELD'
  /** `disableWorker` of an id no live job worker has (ids change with every start). */
  | 'JOB_WORKER_NOT_LIVE';

/**
 * Thrown by the jobs API (`zkPlan.jobs(parent)`, `startJobWorker`) when a job or a job worker
 * cannot be put, changed or removed as asked; `code` says which problem (a `JobProblem`) and `path`
 * names the job's znode (the job worker's, for a problem of a worker).
 *
 * @category Errors
 */
export class JobError extends ZkPlanError {
  readonly code: JobProblem;
  /** `cliMessage`: the message in the `zk-plan` command's words, when `message` names API calls that have a command. */
  constructor(problem: JobProblem, message: string, path: string, cliMessage?: string) {
    super(message, cliMessage === undefined ? { path } : { path, cliMessage });
    this.code = problem;
  }
}
named(JobError, 'JobError');
