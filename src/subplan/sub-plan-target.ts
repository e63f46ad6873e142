/**
 * A sub-plan task (DolphinScheduler's SUB_PROCESS): a task of the built-in function
 * `zk-plan:sub-plan`, which runs a plan spec (inline, or a schedule's by name) as a child plan, and
 * completes with the result of one of the child's tasks once the child completed. It waits with
 * `ctx.notYet`, so no worker is held while the child runs, however deep sub-plans nest.
 */
import { DEFAULTS } from '../config/defaults.js';
import { InvalidArgumentError } from '../errors/usage-errors.js';
import { checkWaitMs } from '../exec/not-yet.js';
import { call, type CallSpec } from '../exec/task-spec.js';
import { assertScheduleName } from '../schedule/schedule-name.js';
import type { PlanSpec } from '../spec/plan-spec-types.js';
import { SUB_PLAN_FUNCTION } from './sub-plan-function.js';

export { SUB_PLAN_FUNCTION };
import { assertValidPath } from '../zk/layout.js';

/**
 * What a sub-plan task runs: a spec given inline, or the spec of a schedule (read when the child
 * is made), with params for it.
 *
 * @category Plans and tasks
 */
export type SubPlanDefinition = (
  | { readonly spec: PlanSpec }
  | {
      /** The schedule whose spec the child runs, with the schedule's params as defaults for `params`. */
      readonly schedule: string;
      /** The schedules' parent. @defaultValue DEFAULTS.cliParents.schedules ('/schedules') */
      readonly schedules?: string;
    }
) & {
  /** Values of the child spec's `{ $param: name }` placeholders. @defaultValue none */
  readonly params?: Readonly<Record<string, unknown>>;
  /**
   * The names under which the task's inputs (the results of its arg tasks, in order) are added to
   * `params`: `inputs: ['day']` binds the first input to `{ $param: 'day' }`. @defaultValue none
   */
  readonly inputs?: readonly string[];
  /**
   * The key of the child's task whose result becomes this task's (the child keeps it: spec tasks
   * keep their results unless they say otherwise). Without it the result is
   * `{ plan, state: 'completed' }`. @defaultValue none
   */
  readonly result?: string;
  /** Where the child plan goes. @defaultValue the parent of the task's own plan */
  readonly parent?: string;
  /** How often the task looks at the child while it runs, in ms. @defaultValue DEFAULTS.subPlanCheckEveryMs (1 000) */
  readonly checkEveryMs?: number;
};

/** A definition, checked. */
export interface CheckedSubPlan {
  readonly source:
    | { readonly kind: 'spec'; readonly spec: PlanSpec }
    | { readonly kind: 'schedule'; readonly schedule: string; readonly schedules: string };
  readonly params: Readonly<Record<string, unknown>>;
  readonly inputs: readonly string[];
  readonly result?: string;
  readonly parent?: string;
  readonly checkEveryMs: number;
}

const KEYS = new Set([
  'spec',
  'schedule',
  'schedules',
  'params',
  'inputs',
  'result',
  'parent',
  'checkEveryMs',
]);

/** Names no param may have: the stored params would be refused, or reach an object's prototype. */
const RESERVED_PARAM_NAMES: ReadonlySet<string> = new Set([
  '__proto__',
  'constructor',
  'prototype',
]);

/** The most inputs a sub-plan task may name. */
const MAX_INPUT_NAMES = 1_000;

/**
 * A task that runs a plan spec as a child plan:
 * `addTask(plan, subPlan({ spec, inputs: ['day'], result: 'merge' }), [listDays])`.
 *
 * @category Plans and tasks
 */
export function subPlan(definition: SubPlanDefinition): CallSpec {
  checkSubPlan(definition, 'subPlan');
  return call(SUB_PLAN_FUNCTION, definition);
}

/** The definition in a sub-plan task's params, checked: InvalidArgumentError naming `where` otherwise. */
export function checkSubPlan(value: unknown, where: string): CheckedSubPlan {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new InvalidArgumentError(
      'subPlan',
      `${where}: expected { spec } or { schedule }, with params?, inputs?, result?, parent?, checkEveryMs?`,
    );
  const definition = value as Record<string, unknown>;
  for (const key of Object.keys(definition))
    if (!KEYS.has(key))
      throw new InvalidArgumentError(
        key,
        `${where}: unknown field of a sub-plan; the known ones are ${[...KEYS].join(', ')}`,
      );
  return {
    source: checkSource(definition, where),
    params: checkParams(definition['params'], where),
    inputs: checkInputNames(definition['inputs'], where),
    ...optionalResult(definition['result'], where),
    ...optionalParent(definition['parent']),
    checkEveryMs: checkInterval(definition['checkEveryMs'], where),
  };
}

function checkSource(definition: Record<string, unknown>, where: string): CheckedSubPlan['source'] {
  const { spec, schedule } = definition;
  if ((spec === undefined) === (schedule === undefined))
    throw new InvalidArgumentError(
      'spec',
      `${where}: give the child's spec inline (spec) or a schedule's by name (schedule), one of the two`,
    );
  if (spec !== undefined) {
    if ('schedules' in definition)
      throw new InvalidArgumentError(
        'schedules',
        `${where}: schedules names where a schedule is, and goes with schedule only`,
      );
    if (
      typeof spec !== 'object' ||
      spec === null ||
      Array.isArray(spec) ||
      typeof (spec as { tasks?: unknown }).tasks !== 'object' ||
      (spec as { tasks?: unknown }).tasks === null
    )
      throw new InvalidArgumentError(
        'spec',
        `${where}: expected a plan spec, { tasks: { key: { fn, … } } } (as submitPlan takes)`,
      );
    return { kind: 'spec', spec: spec as PlanSpec };
  }
  assertScheduleName(schedule);
  const schedules = definition['schedules'] ?? DEFAULTS.cliParents.schedules;
  assertValidPath('schedules', schedules);
  return { kind: 'schedule', schedule, schedules };
}

function checkParams(value: unknown, where: string): Readonly<Record<string, unknown>> {
  if (value === undefined) return {};
  if (
    typeof value !== 'object' ||
    value === null ||
    Array.isArray(value) ||
    Object.getPrototypeOf(value) !== Object.prototype
  )
    throw new InvalidArgumentError(
      'params',
      `${where}: expected an object of the child spec's params by name`,
    );
  return value as Readonly<Record<string, unknown>>;
}

function checkInputNames(value: unknown, where: string): readonly string[] {
  if (value === undefined) return [];
  if (
    !Array.isArray(value) ||
    value.length > MAX_INPUT_NAMES ||
    value.some((name) => typeof name !== 'string' || name === '' || name.length > 200)
  )
    throw new InvalidArgumentError(
      'inputs',
      `${where}: expected the names of the child spec's params that take the task's inputs, in order (at most ${MAX_INPUT_NAMES})`,
    );
  if (new Set(value).size !== value.length)
    throw new InvalidArgumentError('inputs', `${where}: a param is named twice in inputs`);
  // Stored params go through superjson, which refuses these names (prototype pollution).
  const reserved = value.find((name) => RESERVED_PARAM_NAMES.has(name as string));
  if (reserved !== undefined)
    throw new InvalidArgumentError(
      'inputs',
      `${where}: "${String(reserved)}" cannot name a param: choose another name`,
    );
  return value as string[];
}

function optionalResult(value: unknown, where: string): { result?: string } {
  if (value === undefined) return {};
  if (typeof value !== 'string' || value === '' || value.length > 200)
    throw new InvalidArgumentError(
      'result',
      `${where}: expected the key of the child's task whose result the sub-plan task completes with`,
    );
  return { result: value };
}

function optionalParent(value: unknown): { parent?: string } {
  if (value === undefined) return {};
  assertValidPath('parent', value);
  return { parent: value };
}

function checkInterval(value: unknown, where: string): number {
  return checkWaitMs('checkEveryMs', value ?? DEFAULTS.subPlanCheckEveryMs, where);
}

/** The child's params: the definition's own, then each input under its name (an input wins over a param of the same name). */
export function childParams(
  checked: CheckedSubPlan,
  inputs: readonly unknown[],
  task: string,
): Record<string, unknown> {
  if (inputs.length !== checked.inputs.length)
    throw new InvalidArgumentError(
      'inputs',
      `sub-plan task ${task} has ${inputs.length} input(s) and names ${checked.inputs.length} (inputs: [${checked.inputs.join(', ')}]): name each input once, in order`,
      task,
    );
  const params: Record<string, unknown> = { ...checked.params };
  checked.inputs.forEach((name, position) => {
    params[name] = inputs[position]; // never a reserved name (checkInputNames)
  });
  return params;
}
