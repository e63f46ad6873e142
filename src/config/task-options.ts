/**
 * What `addTask` and `addTasks` take besides the task itself: the option types, and their
 * validation into the settings stored with the task (pure).
 */
import { assertDurationMs, assertKnownKeys } from './option-checks.js';
import {
  ADD_TASK_OPTION_KEYS,
  DEFAULT_RETRY_POLICY,
  assertPriority,
  resolveRetryPolicy,
  type RetryPolicy,
} from './plan-options.js';
import { InvalidArgumentError } from '../errors/usage-errors.js';
import type { TaskSettings, TaskSpec } from '../exec/task-spec.js';
import { assertConcurrencyKey } from '../limits/limit-record.js';
import { MAX_TASK_KEY_LENGTH, assertTaskKey } from '../plan/names.js';
import { checkStep, type MapStep } from '../spawn/map-step.js';
import { assertTriggerRule, type TriggerRule } from '../trigger/trigger-rule.js';

/**
 * One task of an `addTasks` batch: its args are task paths, or indices of earlier tasks of the batch.
 *
 * @category Plans and tasks
 */
export interface TaskToAdd {
  readonly task: TaskSpec;
  readonly args?: readonly (string | number)[];
  readonly options?: AddTaskOptions;
}

/**
 * Options of `addTask`.
 *
 * @category Plans and tasks
 */
export interface AddTaskOptions extends RetryPolicy {
  /** Keep the task's result in the plan after the task is done, for `getResult`. @defaultValue false */
  readonly keepResult?: boolean;
  /** Time limit of one run of the function, in ms: then its signal aborts and the try fails (TASK_TIMEOUT). @defaultValue none */
  readonly timeoutMs?: number;
  /** The task's own priority (a whole number, higher first), over its plan's. @defaultValue its plan's `priority` */
  readonly priority?: number;
  /**
   * At most `limits(parent).set(parent, key, n)` tasks with this key run at once across every
   * worker and plan under the plan's parent (a key without a limit does not hold anything back). @defaultValue none
   */
  readonly concurrencyKey?: string;
  /**
   * The task's key, unique within its plan (DuplicateTaskKeyError, TASK_KEY_TAKEN, otherwise): shown
   * by `zk-plan show`, `why`, `wait`, the web view and alerts, and accepted wherever a task is named
   * (`zkPlan.taskOfKey(plan, key)`, `zk-plan why <plan> <key>`). At most 200 characters, no control
   * characters, as a spec's keys. @defaultValue none
   */
  readonly key?: string;
  /**
   * Maps the function's result, a list, over a task per item: `map.fn` is called once per item
   * (the item first in its params, then `map.params`), and this task completes with the result of
   * `reduce` over the mapped results, in list order, as its own (its dependents get it, keepResult
   * keeps it). No worker waits meanwhile: the mapped tasks and the reduce run as other tasks do. A
   * task that does not return a list fails (INVALID_ARGUMENT). @defaultValue none
   */
  readonly map?: MapStep;
  /** With `map`: the task that gets the mapped results. @defaultValue the built-in `zk-plan:collect`, which returns them as a list */
  readonly reduce?: MapStep;
  /**
   * When the task runs, given how its inputs ended (see {@link TriggerRule}): `allDone` for a
   * clean-up step, `oneFailed` for a branch that runs only on failure. A task with another rule than
   * `allSucceeded` receives each input as an {@link InputOutcome}. @defaultValue DEFAULTS.trigger ('allSucceeded')
   */
  readonly trigger?: TriggerRule;
}

/** Room a mapping task's key leaves for its tasks' keys: `<key>[<index>]` and `<key>.reduce`. */
const MAPPED_KEY_SUFFIX = 12;

/**
 * A map or reduce option, checked whole before anything is written: its shape, its tasks' options
 * as addTask's, and room in the task's key for the keys of the tasks it makes.
 */
function checkedStep(name: 'map' | 'reduce', value: unknown, key: string | undefined): MapStep {
  const step = checkStep(name, value);
  if (step.options !== undefined) taskSettings(step.options, `${name}.options`);
  if (key !== undefined && key.length > MAX_TASK_KEY_LENGTH - MAPPED_KEY_SUFFIX)
    throw new InvalidArgumentError(
      'key',
      `a mapping task's key has at most ${MAX_TASK_KEY_LENGTH - MAPPED_KEY_SUFFIX} characters: its tasks are keyed <key>[<index>] and <key>.reduce`,
    );
  return step;
}

/**
 * Validates addTask's options (InvalidArgumentError naming the option); the settings stored with the
 * task. `where` names what holds them in a message about an unknown one.
 */
export function taskSettings(options: AddTaskOptions, where = 'addTask'): TaskSettings {
  if (typeof options !== 'object' || options === null)
    throw new InvalidArgumentError('options', 'expected an object');
  assertKnownKeys(where, options, ADD_TASK_OPTION_KEYS);
  const {
    keepResult = false,
    timeoutMs,
    maxAttempts,
    initialDelayMs,
    multiplier,
    maxDelayMs,
    priority,
    concurrencyKey,
    key,
    map,
    reduce,
    trigger,
  } = options;
  if (typeof keepResult !== 'boolean')
    throw new InvalidArgumentError('keepResult', `expected a boolean, got ${typeof keepResult}`);
  if (timeoutMs !== undefined) assertDurationMs('timeoutMs', timeoutMs);
  if (priority !== undefined) assertPriority('priority', priority);
  if (concurrencyKey !== undefined) assertConcurrencyKey('concurrencyKey', concurrencyKey);
  if (key !== undefined) assertTaskKey('key', key);
  if (trigger !== undefined) assertTriggerRule(trigger, 'trigger');
  if (reduce !== undefined && map === undefined)
    throw new InvalidArgumentError('reduce', 'a reduce needs a map: give map too');
  const retry = Object.fromEntries(
    Object.entries({ maxAttempts, initialDelayMs, multiplier, maxDelayMs }).filter(
      ([, value]) => value !== undefined,
    ),
  ) as RetryPolicy;
  resolveRetryPolicy(retry, DEFAULT_RETRY_POLICY); // validates
  return {
    keepResult,
    retry,
    ...(timeoutMs !== undefined ? { timeoutMs } : {}),
    ...(priority !== undefined ? { priority } : {}),
    ...(concurrencyKey !== undefined ? { concurrencyKey } : {}),
    ...(key !== undefined ? { key } : {}),
    ...(map !== undefined ? { map: checkedStep('map', map, key) } : {}),
    ...(reduce !== undefined ? { reduce: checkedStep('reduce', reduce, key) } : {}),
    ...(trigger !== undefined ? { trigger } : {}),
  };
}
