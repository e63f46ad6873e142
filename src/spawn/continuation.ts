/**
 * What `ctx.continueWith` returns, and a task function returns in turn: the task to which the
 * function hands its result over. The worker reads it once the function returned
 * (src/worker/perform-task.ts) and makes that task through the spawner (TaskSpawner.handOver).
 */
import type { TaskToAdd } from '../config/task-options.js';

/**
 * A hand-over made by `ctx.continueWith`: return it from the task function. Opaque: it only says
 * which task continues the one that made it.
 *
 * @category Plans and tasks
 */
export class Continuation {
  /** @internal */
  constructor(
    /** The task that made it: a continuation is honoured only when that task returns it. */
    readonly from: string,
    /** The task to make, as addTasks takes it (its args are paths of tasks of the plan). */
    readonly entry: TaskToAdd,
  ) {
    Object.freeze(this);
  }
}
