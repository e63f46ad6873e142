/**
 * The `ctx.spawn` of one try: numbers its calls (the n-th call of every run of the task reads and
 * writes the same record), turns its entries into addTasks entries, and tracks the calls still
 * writing, so that the try ends, and the claim is given back, only once they settled.
 */
import type { TaskToAdd } from '../config/task-options.js';
import { InvalidArgumentError } from '../errors/usage-errors.js';
import type { SpawnTask } from '../exec/task-context.js';
import type { Claim } from '../store/task-store.js';
import type { TaskSpawner } from './task-spawner.js';

export interface SpawnCalls {
  /** `ctx.spawn`. */
  readonly spawn: (tasks: readonly SpawnTask[]) => Promise<string[]>;
  /** Resolves once every call made so far settled (whether it succeeded or not). */
  readonly settled: () => Promise<void>;
}

export function spawnCalls(claim: Claim, spawner: TaskSpawner): SpawnCalls {
  let calls = 0;
  const spawning = (claim.progress.spawning ??= new Set());
  return {
    spawn: (tasks) => {
      const call = calls++;
      const running = (async () => spawner.spawn(claim, call, toTasksToAdd(tasks)))();
      spawning.add(running);
      running.then(
        () => spawning.delete(running),
        () => spawning.delete(running),
      );
      return running;
    },
    settled: async () => {
      await Promise.allSettled([...spawning]);
    },
  };
}

/** `{ task, args?, key?, options? }` as addTasks takes it (`{ task, args, options: { …, key } }`). */
function toTasksToAdd(tasks: readonly SpawnTask[]): TaskToAdd[] {
  if (!Array.isArray(tasks))
    throw new InvalidArgumentError('tasks', 'expected an array of { task, args?, key?, options? }');
  return tasks.map((entry: SpawnTask, index) => {
    if (typeof entry !== 'object' || entry === null)
      throw new InvalidArgumentError(`tasks[${index}]`, 'expected { task, args?, key?, options? }');
    const { task, args, key, options, ...rest } = entry;
    const unknown = Object.keys(rest);
    if (unknown.length > 0)
      throw new InvalidArgumentError(
        `tasks[${index}]`,
        `unknown field ${JSON.stringify(unknown[0])}: expected { task, args?, key?, options? }`,
      );
    if (key !== undefined && options?.key !== undefined)
      throw new InvalidArgumentError(
        `tasks[${index}].key`,
        'give the key once: as key or as options.key',
      );
    const withKey = key === undefined ? options : { ...options, key };
    return {
      task,
      ...(args === undefined ? {} : { args }),
      ...(withKey === undefined ? {} : { options: withKey }),
    };
  });
}
