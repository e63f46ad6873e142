/**
 * The `map` and `reduce` options of a task (pure): their shape, and their check, used by addTask
 * and again when a worker reads them back from the task's definition (src/spawn/map-over.ts runs them).
 */
import { assertFunctionName } from '../exec/function-name.js';
import { WAIT_FOR_PLAN_FUNCTION } from '../dependent/wait-for-plan-function.js';
import { SUB_PLAN_FUNCTION } from '../subplan/sub-plan-function.js';
import type { RetryPolicy } from '../config/plan-options.js';
import { InvalidArgumentError } from '../errors/usage-errors.js';
import { assertSerializable } from '../serialization/codec.js';

/**
 * The options of a task a map or a reduce makes: addTask's retry policy, time limit, priority and
 * limit key (their results are kept, and their keys follow the mapping task's).
 *
 * @category Plans and tasks
 */
export interface MappedTaskOptions extends RetryPolicy {
  readonly timeoutMs?: number;
  readonly priority?: number;
  readonly concurrencyKey?: string;
}

/**
 * A task a map or a reduce makes: `map`'s is called once per item, with the item first and then
 * `params`; `reduce`'s with `params`, and the mapped results as its inputs, in list order.
 *
 * @category Plans and tasks
 */
export interface MapStep {
  readonly fn: string;
  readonly params?: readonly unknown[];
  readonly options?: MappedTaskOptions;
}

const STEP_KEYS = new Set(['fn', 'params', 'options']);
const MAPPED_OPTION_KEYS = new Set([
  'maxAttempts',
  'initialDelayMs',
  'multiplier',
  'maxDelayMs',
  'timeoutMs',
  'priority',
  'concurrencyKey',
]);

/**
 * Checks a `map` or `reduce` option (InvalidArgumentError naming it) and returns it as stored in
 * the task's definition. Its options are checked when the tasks are made (as addTask's).
 */
export function checkStep(name: string, value: unknown): MapStep {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new InvalidArgumentError(name, 'expected { fn, params?, options? }');
  for (const field of Object.keys(value))
    if (!STEP_KEYS.has(field))
      throw new InvalidArgumentError(
        name,
        `unknown field ${JSON.stringify(field)}: expected { fn, params?, options? }`,
      );
  const { fn, params = [], options } = value as Record<string, unknown>;
  try {
    assertFunctionName(fn);
  } catch (error) {
    throw new InvalidArgumentError(`${name}.fn`, (error as Error).message);
  }
  // Their definition is their first param, where a map puts each item: only the task's own call can be one.
  if (fn === SUB_PLAN_FUNCTION || fn === WAIT_FOR_PLAN_FUNCTION)
    throw new InvalidArgumentError(
      `${name}.fn`,
      `'${fn}' cannot be a map's or reduce's function (its first param is its definition, not an item): map over a function of your own that returns the items, and give each sub-plan or dependent task its own call`,
    );
  if (!Array.isArray(params)) throw new InvalidArgumentError(`${name}.params`, 'expected an array');
  assertSerializable(params, `${name}.params`);
  if (options !== undefined) {
    if (typeof options !== 'object' || options === null || Array.isArray(options))
      throw new InvalidArgumentError(`${name}.options`, 'expected an object of task options');
    for (const field of Object.keys(options))
      if (!MAPPED_OPTION_KEYS.has(field))
        throw new InvalidArgumentError(
          `${name}.options`,
          `${JSON.stringify(field)} cannot be set here (the tasks a map makes take ${[...MAPPED_OPTION_KEYS].join(', ')})`,
        );
  }
  return {
    fn,
    params,
    ...(options === undefined ? {} : { options: options as MappedTaskOptions }),
  };
}
