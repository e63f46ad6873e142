import type { DependencyContainer } from 'tsyringe';
import type { TaskLogger } from '../logs/task-log-types.js';

/**
 * What a task function receives as its first argument (the Clojure original's `$`, and more).
 *
 * @category Plans and tasks
 */
export interface TaskContext<Params extends readonly unknown[] = unknown[]> {
  /** Values bound by `call(name, ...params)`. */
  readonly params: Params;
  /** The tsyringe container of the worker process: resolve services (DB pools, clients) from it. */
  readonly container: DependencyContainer;
  /** Path of the task being run. */
  readonly task: string;
  /** Path of its plan. */
  readonly plan: string;
  /** Id of the worker running it. */
  readonly workerId: string;
  /** Aborted when the worker stops past its drain timeout or loses the task: stop work and return. */
  readonly signal: AbortSignal;
  /**
   * The task's log: lines kept with the task (the last ones in ZooKeeper, all in the worker's
   * sink), read with `logs.read` / `zk-plan logs`, and shown on the worker's output. What the function
   * writes with `console.*` while it runs goes there too.
   */
  readonly log: TaskLogger;
  /** Which try this is: 1, then n after n − 1 failures that counted against the task's attempts. */
  readonly attempt: number;
}

/**
 * A function a plan's tasks can name: `args` are the results of the task's arg tasks, in `addTask` order.
 *
 * @category Plans and tasks
 */
export type TaskFunction<
  Params extends readonly unknown[] = never[],
  Args extends readonly unknown[] = never[],
  Result = unknown,
> = (ctx: TaskContext<Params>, ...args: Args) => Result | Promise<Result>;
