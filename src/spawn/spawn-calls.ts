/**
 * The `ctx.spawn` and `ctx.continueWith` of one try: numbers its spawn calls (the n-th call of every run of the task reads and
 * writes the same record), turns its entries into addTasks entries, and tracks the calls still
 * writing, so that the try ends, and the claim is given back, only once they settled.
 */
import type { TaskToAdd } from '../config/task-options.js';
import { InvalidArgumentError } from '../errors/usage-errors.js';
import type { SpawnTask } from '../exec/task-context.js';
import type { TaskSpec } from '../exec/task-spec.js';
import type { AddTaskOptions } from '../config/task-options.js';
import { Continuation } from './continuation.js';
import type { Claim } from '../store/task-store.js';
import type { TaskSpawner } from './task-spawner.js';

export interface SpawnCalls {
  /** `ctx.spawn`. */
  readonly spawn: (tasks: readonly SpawnTask[]) => Promise<string[]>;
  /** `ctx.continueWith`: checks its task at once, so a bad one fails the try where it is written. */
  readonly continueWith: (
    task: TaskSpec,
    args?: readonly string[],
    options?: AddTaskOptions,
  ) => Continuation;
  /** Resolves once every call made so far settled (whether it succeeded or not). */
  readonly settled: () => Promise<void>;
  /** The try's function has returned: calls made from now on (a timer it left) are refused. */
  readonly close: () => void;
}

/**
 * Tracks a call that writes under the claimed task until it settles: the claim is given back only
 * once every such call settled (TaskStore.release). Resolves or rejects as the call does.
 */
export function trackSpawnCall<T>(claim: Claim, call: Promise<T>): Promise<T> {
  const spawning = (claim.progress.spawning ??= new Set());
  spawning.add(call);
  call.then(
    () => spawning.delete(call),
    () => spawning.delete(call),
  );
  return call;
}

export function spawnCalls(claim: Claim, spawner: TaskSpawner): SpawnCalls {
  let calls = 0;
  // A spawned task that takes this task's result: this task can then not hand over to anything
  // made of it (its result would be its continuation's, which would wait for itself).
  let spawnedDependent = false;
  let closed = false;
  const assertOpen = (call: string): void => {
    if (closed)
      throw new InvalidArgumentError(
        call,
        `task ${claim.task}'s function had returned: call ctx.spawn and ctx.continueWith only while it runs (await them before it returns)`,
      );
  };
  return {
    spawn: (tasks) => {
      const call = calls++;
      return trackSpawnCall(
        claim,
        (async () => {
          assertOpen('ctx.spawn');
          const entries = toTasksToAdd(tasks);
          if (entries.some((entry) => entry.args?.includes(claim.task) === true))
            spawnedDependent = true;
          const paths = await spawner.spawn(claim, call, entries);
          claim.progress.spawned = (claim.progress.spawned ?? 0) + paths.length;
          return paths;
        })(),
      );
    },
    continueWith: (task, args, options) => {
      assertOpen('ctx.continueWith');
      if (
        args !== undefined &&
        (!Array.isArray(args) || args.some((arg) => typeof arg !== 'string'))
      )
        throw new InvalidArgumentError(
          'args',
          'ctx.continueWith takes the paths of tasks of the plan (those ctx.spawn resolved, for instance)',
        );
      const entry = toTaskToAdd(
        {
          task,
          ...(args === undefined ? {} : { args }),
          ...(options === undefined ? {} : { options }),
        },
        'continueWith',
      );
      if (args?.includes(claim.task) === true || spawnedDependent)
        throw new InvalidArgumentError(
          'args',
          `task ${claim.task} cannot hand over to a task that waits for its own result: ${spawnedDependent ? 'it spawned a task that takes its result' : 'it is among the args'}, and its result is its continuation's`,
        );
      spawner.check(claim, [entry]);
      return new Continuation(claim.task, entry);
    },
    settled: async () => {
      await Promise.allSettled([...(claim.progress.spawning ?? [])]);
    },
    close: () => {
      closed = true;
    },
  };
}

/** `{ task, args?, key?, options? }` as addTasks takes it (`{ task, args, options: { …, key } }`). */
function toTasksToAdd(tasks: readonly SpawnTask[]): TaskToAdd[] {
  if (!Array.isArray(tasks))
    throw new InvalidArgumentError('tasks', 'expected an array of { task, args?, key?, options? }');
  return tasks.map((entry: SpawnTask, index) => toTaskToAdd(entry, `tasks[${index}]`));
}

/** One entry, checked; `label` names it in errors. */
function toTaskToAdd(entry: SpawnTask, label: string): TaskToAdd {
  if (typeof entry !== 'object' || entry === null)
    throw new InvalidArgumentError(label, 'expected { task, args?, key?, options? }');
  const { task, args, key, options, ...rest } = entry;
  const unknown = Object.keys(rest);
  if (unknown.length > 0)
    throw new InvalidArgumentError(
      label,
      `unknown field ${JSON.stringify(unknown[0])}: expected { task, args?, key?, options? }`,
    );
  if (key !== undefined && options?.key !== undefined)
    throw new InvalidArgumentError(`${label}.key`, 'give the key once: as key or as options.key');
  const withKey = key === undefined ? options : { ...options, key };
  return {
    task,
    ...(args === undefined ? {} : { args }),
    ...(withKey === undefined ? {} : { options: withKey }),
  };
}
