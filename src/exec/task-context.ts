import type { DependencyContainer } from 'tsyringe';
import type { AddTaskOptions } from '../config/task-options.js';
import type { TaskLogger } from '../logs/task-log-types.js';
import type { TaskSpec } from './task-spec.js';
import type { Continuation } from '../spawn/continuation.js';
import type { NotYet, NotYetOptions } from './not-yet.js';

/**
 * One task for `ctx.spawn` to add: what it runs, its inputs (paths of tasks of the plan, or indices
 * of earlier entries of the same call) and its key; `options` as addTask's.
 *
 * @category Plans and tasks
 */
export interface SpawnTask {
  readonly task: TaskSpec;
  readonly args?: readonly (string | number)[];
  /** The task's key, unique within the plan (as `options.key`). */
  readonly key?: string;
  readonly options?: AddTaskOptions;
}

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
  /**
   * Adds tasks to this task's plan while it runs, and resolves their paths, in order: a list of
   * files becomes one task per file, their merge a task whose args are their indices. Safe to
   * repeat: a run of this task after a crash (or a retry) gets the tasks the earlier run's call
   * made, never a second set, so the n-th call must ask for the same tasks in every run (derive
   * them from params and inputs only; otherwise SPAWN_MISMATCH). The spawned tasks run like any
   * other; this task's dependents still wait for this task's own result only. Not available to
   * inline functions.
   */
  spawn(tasks: readonly SpawnTask[]): Promise<string[]>;
  /**
   * Hands this task's result over to a new task: `return ctx.continueWith(call('merge'), parts)`.
   * The new task (the continuation) runs `task` on the results of `args` (paths of tasks of the
   * plan, such as those `spawn` resolved); this task's dependents then get the continuation's
   * result as this task's, and `keepResult` keeps it under this task's path. The worker is free
   * as soon as the function returns: nothing waits on the continuation, so continuations nest
   * (a continuation may spawn and continue again) without holding a worker per level. Safe to
   * repeat as `spawn` is: every run of this task hands over to the same continuation, so it must
   * ask for the same function each time (otherwise SPAWN_MISMATCH). Only the returned value
   * counts: a continuation made and not returned is nothing. Not available to inline functions.
   */
  continueWith(task: TaskSpec, args?: readonly string[], options?: AddTaskOptions): Continuation;
  /**
   * Says that what this task waits for does not hold yet:
   * `return ctx.notYet('the export is not there', { afterMs: 60_000 })`. The worker gives the task back without
   * charging an attempt, records the reason (`why`, `explainTask`, the web view show it) and runs
   * the task again after `afterMs`. Nothing holds a worker meanwhile. Only the returned value
   * counts. Not available to inline functions.
   */
  notYet(reason: string, options?: NotYetOptions): NotYet;
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
