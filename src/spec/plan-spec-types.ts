/**
 * The shapes of a plan spec, apart from its checks (plan-spec.ts): a module that imports types
 * only, so that modules the checks use (sub-plan definitions hold a spec) can name them.
 */
import type { TriggerRule } from '../trigger/trigger-rule-names.js';
import type { PlanOptions } from '../config/plan-options.js';
import type { AddTaskOptions } from '../config/task-options.js';
import type { MapStep } from '../spawn/map-step.js';

/**
 * One task of a spec.
 *
 * @category Specs
 */
export interface TaskSpecEntry {
  /** The registered function. */
  readonly fn: string;
  /** Bound into `ctx.params`; `{ $param: 'name' }` anywhere in them is replaced at submit. */
  readonly params?: readonly unknown[];
  /** Keys of the tasks whose results are its inputs, in argument order (a key may repeat). */
  readonly inputs?: readonly string[];
  /** `addTask`'s options (keepResult, retries, timeoutMs, priority, concurrencyKey). */
  readonly options?: AddTaskOptions;
  /** Maps the task's result, a list, over a `map.fn` task per item (addTask's `map` option). */
  readonly map?: MapStep;
  /** With `map`: the task over the mapped results whose result becomes this task's (addTask's `reduce` option). */
  readonly reduce?: MapStep;
  /** When the task runs, given how its inputs ended (addTask's `trigger` option). @defaultValue DEFAULTS.trigger ('allSucceeded') */
  readonly trigger?: TriggerRule;
}

/**
 * A serialisable plan definition: written in TypeScript, or as JSON for the CLI.
 *
 * @category Specs
 */
export interface PlanSpec {
  /** Each task by its key (at most 200 characters, no control characters): how `show`, `why`, `wait`, the web view and alerts name it. */
  readonly tasks: Readonly<Record<string, TaskSpecEntry>>;
  readonly options?: PlanOptions;
  /** The name of the plans made from the spec (as `createPlan`'s `name` option). @defaultValue none (a schedule's plans: the schedule's name) */
  readonly name?: string;
}
