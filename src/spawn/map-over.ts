/**
 * Map/reduce over a list known only at run time, written as options rather than as `ctx.spawn`
 * calls: a task added with `{ map, reduce? }` (or a spec's task with `map` and `reduce`) returns a
 * list; the worker then spawns a `map.fn` task per item and hands over to a `reduce.fn` task over
 * their results, in list order (without `reduce`, to the built-in `zk-plan:collect`, which returns
 * them as a list). The task's dependents get that result as the task's own.
 *
 * The step the worker runs once the function returned (`mapOver`), through the try's `ctx.spawn`
 * and `ctx.continueWith`: as safe to repeat as they are. The options and their check are in
 * map-step.ts.
 */
import { call } from '../exec/task-spec.js';
import type { AddTaskOptions } from '../config/task-options.js';
import type { Continuation } from './continuation.js';
import type { SpawnTask } from '../exec/task-context.js';
import { InvalidArgumentError } from '../errors/usage-errors.js';
import { COLLECT_FUNCTION } from './collect-function.js';
import type { MapStep } from './map-step.js';
import { MAX_SPAWNED_TASKS } from './spawn-record.js';

/** What `mapOver` needs of the try: its spawn and hand-over, and the task's key (the made tasks' keys follow it). */
export interface MapContext {
  readonly task: string;
  readonly key: string | undefined;
  spawn(tasks: readonly SpawnTask[]): Promise<string[]>;
  continueWith(
    task: ReturnType<typeof call>,
    args?: readonly string[],
    options?: AddTaskOptions,
  ): Continuation;
}

/**
 * The step after a mapping task's function returned `list`: a `map.fn` task per item (in calls of
 * at most MAX_SPAWNED_TASKS), then the hand-over to the reduce. A keyed task's made tasks are keyed
 * `<key>[<index>]` and `<key>.reduce`. Anything but a list is refused (InvalidArgumentError).
 */
export async function mapOver(
  list: unknown,
  map: MapStep,
  reduce: MapStep | undefined,
  context: MapContext,
): Promise<Continuation> {
  if (!Array.isArray(list))
    throw new InvalidArgumentError(
      'result',
      `task ${context.task} maps its result over ${map.fn}, so it must return a list (an array), got ${list === null ? 'null' : typeof list}`,
    );
  const paths: string[] = [];
  for (let start = 0; start < list.length; start += MAX_SPAWNED_TASKS) {
    const items = list.slice(start, start + MAX_SPAWNED_TASKS);
    const made = await context.spawn(
      items.map((item: unknown, offset) => ({
        task: call(map.fn, item, ...(map.params ?? [])),
        ...(context.key === undefined ? {} : { key: `${context.key}[${start + offset}]` }),
        ...(map.options === undefined ? {} : { options: map.options }),
      })),
    );
    paths.push(...made);
  }
  const reduceKey = context.key === undefined ? {} : { key: `${context.key}.reduce` };
  return reduce === undefined
    ? context.continueWith(call(COLLECT_FUNCTION), paths, reduceKey)
    : context.continueWith(call(reduce.fn, ...(reduce.params ?? [])), paths, {
        ...reduce.options,
        ...reduceKey,
      });
}
