/**
 * Declarative plan definitions: a spec names its tasks by key, each with a registered function,
 * its params and the keys of its inputs in argument order; `{ $param: name }` in params is
 * replaced by a named parameter at submit. `checkPlanSpec` (pure) validates a spec completely
 * before anything is written and orders its tasks so that every input comes before its user.
 * It takes time linear in the tasks and their inputs, whatever the graph's shape (a fan-out from
 * one input, a long chain, a wide DAG): schedulers check a schedule's spec at every read and tick.
 */
import { assertTriggerRule, type TriggerRule } from '../trigger/trigger-rule.js';
import type { PlanOptions } from '../config/plan-options.js';
import { PlanSpecError } from '../errors/spec-errors.js';
import { assertFunctionName } from '../exec/function-name.js';
import type { AddTaskOptions } from '../config/task-options.js';
import { assertSerializable } from '../serialization/codec.js';
import { SHELL_FUNCTION, shellParamsProblem } from '../shell/shell-params.js';
import { InvalidArgumentError } from '../errors/usage-errors.js';
import { WAIT_FOR_PLAN_FUNCTION, checkTarget } from '../dependent/dependency-target.js';
import { checkSubPlan } from '../subplan/sub-plan-target.js';
import { SUB_PLAN_FUNCTION } from '../subplan/sub-plan-function.js';
import { planNameProblem, taskKeyProblem } from '../plan/names.js';
import { checkArity, type SchemasOf } from './typed-edges.js';
import { checkStep, type MapStep } from '../spawn/map-step.js';

export type { PlanSpec, TaskSpecEntry } from './plan-spec-types.js';
import type { PlanSpec, TaskSpecEntry } from './plan-spec-types.js';

/**
 * A placeholder in params: replaced at submit by the named parameter.
 *
 * @category Specs
 */
export interface ParamPlaceholder {
  readonly $param: string;
}

/** What checking a spec yields: its tasks in an order where inputs come first, params filled in. */
export interface CheckedSpec {
  readonly order: readonly string[];
  readonly tasks: ReadonlyMap<
    string,
    {
      readonly fn: string;
      readonly params: readonly unknown[];
      readonly inputs: readonly string[];
      readonly options: AddTaskOptions;
    }
  >;
  /** The plan's options, its `name` among them when the spec has one. */
  readonly options: PlanOptions;
}

/** What a spec is checked against. */
export interface SpecContext {
  /** Names a function must have (the submitting process's registry; empty: not checked). */
  readonly registered: readonly string[];
  /** Functions of the live workers of the parent; undefined when none is live (then not checked). */
  readonly live?: readonly (readonly string[])[];
  /** Whether a live worker of the parent allows shell tasks; undefined when none is live (then not checked). */
  readonly liveShell?: boolean;
  /**
   * Refuse a function nothing vouches for: with no registry to check against and no live worker,
   * every function is unknown, and a plan of them would wait for ever unseen. @defaultValue false
   */
  readonly requireKnown?: boolean;
  /** Values of `{ $param }` placeholders. */
  readonly params: Readonly<Record<string, unknown>>;
  /** The schemas a function was registered with (typed edges: arity is checked here; values and edge types by checkSpecValues). */
  readonly schemasOf?: SchemasOf;
}

const ENTRY_KEYS = new Set(['fn', 'params', 'inputs', 'options', 'map', 'reduce', 'trigger']);
const SPEC_KEYS = new Set(['tasks', 'options', 'name']);

/**
 * Checks `spec` against `context`; throws PlanSpecError naming the task for the first problem.
 * `submitPlan`, schedules and imports call it with what they know of the cluster; users submit.
 *
 * @internal
 */
export function checkPlanSpec(spec: unknown, context: SpecContext): CheckedSpec {
  if (typeof spec !== 'object' || spec === null || Array.isArray(spec))
    throw new PlanSpecError(
      'SPEC_INVALID',
      undefined,
      'expected an object { tasks: { [key]: { fn, params?, inputs?, options? } }, options?, name? }',
    );
  const { tasks, options, name } = spec as { tasks?: unknown; options?: unknown; name?: unknown };
  for (const key of Object.keys(spec))
    if (!SPEC_KEYS.has(key))
      throw new PlanSpecError(
        'SPEC_INVALID',
        undefined,
        `unknown field "${key}" (a spec has tasks, options and name)`,
      );
  // Keys, then each value by key: cheaper than Object.entries (no pair per task) on an object of 100 000 keys.
  const keys =
    typeof tasks === 'object' && tasks !== null && !Array.isArray(tasks) ? Object.keys(tasks) : [];
  if (keys.length === 0)
    throw new PlanSpecError(
      'SPEC_INVALID',
      undefined,
      '"tasks" must be an object with at least one task, by key',
    );
  if (
    options !== undefined &&
    (typeof options !== 'object' || options === null || Array.isArray(options))
  )
    throw new PlanSpecError(
      'SPEC_INVALID',
      undefined,
      '"options" must be an object of plan options (failurePolicy, maxAttempts, history, priority…)',
    );
  const named = checkName(name, options as { name?: unknown } | undefined);
  const functions = knownFunctions(context);
  const entries = new Map<string, CheckedTask>();
  const inputs: (readonly string[])[] = [];
  for (const key of keys) {
    const entry = checkEntry(key, (tasks as Record<string, unknown>)[key], context, functions);
    entries.set(key, entry);
    inputs.push(entry.inputs);
  }
  const order = topologicalOrder(inputGraph(keys, inputs));
  if (context.schemasOf !== undefined) checkArity(entries, context.schemasOf);
  return { order, tasks: entries, options: { ...((options ?? {}) as PlanOptions), ...named } };
}

/** The spec's `name` as a createPlan option; given once, in `name` or in `options.name` (createPlan checks the latter). */
function checkName(name: unknown, options: { name?: unknown } | undefined): { name?: string } {
  if (name === undefined) return {};
  const problem = planNameProblem(name);
  if (problem !== undefined)
    throw new PlanSpecError('SPEC_INVALID', undefined, `"name": ${problem}`);
  if (options?.name !== undefined)
    throw new PlanSpecError(
      'SPEC_INVALID',
      undefined,
      'the plan\'s name is given twice: keep "name" and drop "options.name"',
    );
  return { name: name as string };
}

/** A task key as an error may quote it: at most 40 characters, as JSON text. */
function quotedKey(key: string): string {
  return JSON.stringify(key.length > 40 ? `${key.slice(0, 40)}…` : key);
}

type CheckedTask = {
  fn: string;
  params: readonly unknown[];
  inputs: readonly string[];
  options: AddTaskOptions;
};

/**
 * The registered names and the live workers' functions as sets, made once per spec: each task's
 * function is then looked up in constant time, however many tasks, functions and workers.
 */
interface KnownFunctions {
  /** Undefined: not checked (no registry given). */
  readonly registered: ReadonlySet<string> | undefined;
  /** Undefined: not checked (no live worker, or one that runs any function). */
  readonly live: ReadonlySet<string> | undefined;
  /** No registry was given and no worker is live, and unknown functions are refused: every function is unknown. */
  readonly vouchedByNobody: boolean;
}

function knownFunctions(context: SpecContext): KnownFunctions {
  const { registered, live } = context;
  return {
    registered: registered.length > 0 ? new Set(registered) : undefined,
    live:
      live !== undefined && live.length > 0 && !live.some((functions) => functions.length === 0)
        ? new Set(live.flat())
        : undefined,
    vouchedByNobody:
      context.requireKnown === true &&
      registered.length === 0 &&
      (live === undefined || live.length === 0),
  };
}

function checkEntry(
  key: string,
  raw: unknown,
  context: SpecContext,
  functions: KnownFunctions,
): CheckedTask {
  const keyProblem = taskKeyProblem(key);
  if (keyProblem !== undefined)
    throw new PlanSpecError(
      'SPEC_INVALID',
      undefined,
      `the task key ${quotedKey(key)} cannot be used: ${keyProblem}`,
    );
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    throw new PlanSpecError('SPEC_INVALID', key, 'expected { fn, params?, inputs?, options? }');
  const entry = raw as Record<string, unknown>;
  for (const field of Object.keys(entry))
    if (!ENTRY_KEYS.has(field))
      throw new PlanSpecError(
        'SPEC_INVALID',
        key,
        `unknown field "${field}" (a task has fn, params, inputs, options, map, reduce and trigger)`,
      );
  const { fn, params = [], inputs = [], options = {} } = entry;
  try {
    assertFunctionName(fn);
  } catch (error) {
    throw new PlanSpecError('SPEC_INVALID', key, (error as Error).message);
  }
  if (!Array.isArray(params))
    throw new PlanSpecError('SPEC_INVALID', key, '"params" must be an array');
  if (!Array.isArray(inputs) || inputs.some((input) => typeof input !== 'string'))
    throw new PlanSpecError('SPEC_INVALID', key, '"inputs" must be an array of task keys');
  if (typeof options !== 'object' || options === null || Array.isArray(options))
    throw new PlanSpecError(
      'SPEC_INVALID',
      key,
      '"options" must be an object of task options (keepResult, timeoutMs, maxAttempts, concurrencyKey…)',
    );
  if ((options as { key?: unknown }).key !== undefined)
    throw new PlanSpecError(
      'SPEC_INVALID',
      key,
      '"options.key" cannot be given: a spec\'s task is known by its key in "tasks"',
    );
  const steps = fillStepParams(key, checkSteps(key, entry), context.params);
  const trigger = checkTrigger(key, entry);
  // The built-in shell function is every process's: what counts is whether a live worker allows it.
  if (fn === SHELL_FUNCTION && context.liveShell === false) {
    throw new PlanSpecError(
      'SPEC_UNKNOWN_FUNCTION',
      key,
      'no live worker of the parent allows shell tasks: start one with zk-plan worker --allow-shell (startWorkers(parent, { allowShell: true }))',
    );
  }
  for (const name of [fn, ...steps.functions])
    if (name !== SHELL_FUNCTION && name !== WAIT_FOR_PLAN_FUNCTION && name !== SUB_PLAN_FUNCTION)
      checkKnown(key, name, context, functions);
  const filled =
    fn === SUB_PLAN_FUNCTION
      ? fillSubPlanParams(key, params, context.params)
      : fillParams(key, params, context.params);
  const shellProblem = fn === SHELL_FUNCTION ? shellParamsProblem(filled) : undefined;
  if (fn === WAIT_FOR_PLAN_FUNCTION) {
    try {
      checkTarget(filled[0], `task "${key}"`);
    } catch (error) {
      if (!(error instanceof InvalidArgumentError)) throw error;
      throw new PlanSpecError(
        'SPEC_PARAM_INVALID',
        key,
        `its dependency is invalid: ${error.message}`,
      );
    }
  }
  if (fn === SUB_PLAN_FUNCTION) checkSubPlanTask(key, filled[0], inputs);
  if (shellProblem !== undefined)
    throw new PlanSpecError(
      'SPEC_PARAM_INVALID',
      key,
      `its shell call is invalid: ${shellProblem}`,
    );
  try {
    // No params (a new, plain array) and no options (the default {}) hold nothing to refuse: not walked.
    if (filled.length > 0) assertSerializable(filled, `params of task "${key}"`);
    if (entry['options'] !== undefined) assertSerializable(options, `options of task "${key}"`);
  } catch (error) {
    throw new PlanSpecError('SPEC_UNSERIALIZABLE', key, (error as Error).message);
  }
  return {
    fn,
    params: filled,
    inputs: inputs as string[],
    options: {
      ...(options as AddTaskOptions),
      ...steps.options,
      ...(trigger === undefined ? {} : { trigger }),
    },
  };
}

/** The entry's `trigger`, checked; given beside fn, not in "options". */
function checkTrigger(key: string, entry: Record<string, unknown>): TriggerRule | undefined {
  const options = entry['options'] as { trigger?: unknown } | undefined;
  if (options?.trigger !== undefined)
    throw new PlanSpecError('SPEC_INVALID', key, 'give trigger beside fn, not in "options"');
  const { trigger } = entry;
  if (trigger === undefined) return undefined;
  try {
    assertTriggerRule(trigger, 'trigger');
  } catch (error) {
    throw new PlanSpecError('SPEC_INVALID', key, `"trigger": ${(error as Error).message}`);
  }
  return trigger;
}

/** Refuses a function nothing known runs: the submitting process's registry, the live workers, or (requireKnown) anything at all. */
function checkKnown(
  key: string,
  fn: string,
  context: SpecContext,
  functions: KnownFunctions,
): void {
  if (functions.registered !== undefined && !functions.registered.has(fn)) {
    throw new PlanSpecError(
      'SPEC_UNKNOWN_FUNCTION',
      key,
      `function "${fn}" is not registered (registered: ${context.registered.join(', ')})`,
    );
  }
  if (functions.live !== undefined && !functions.live.has(fn)) {
    throw new PlanSpecError(
      'SPEC_UNKNOWN_FUNCTION',
      key,
      `no live worker of the parent registers "${fn}"`,
    );
  }
  if (functions.vouchedByNobody) {
    throw new PlanSpecError(
      'SPEC_UNKNOWN_FUNCTION',
      key,
      `nothing knows "${fn}": no worker of the parent is live and no registry was given to check it against (start a worker that registers it, check against its module, or allow unknown functions)`,
    );
  }
}

/** The entry's `map` and `reduce`, checked, as addTask options; and the functions they call. */
function checkSteps(
  key: string,
  entry: Record<string, unknown>,
): { options: { map?: MapStep; reduce?: MapStep }; functions: string[] } {
  const { map, reduce } = entry;
  const options = entry['options'] as { map?: unknown; reduce?: unknown } | undefined;
  if (options?.map !== undefined || options?.reduce !== undefined)
    throw new PlanSpecError('SPEC_INVALID', key, 'give map and reduce beside fn, not in "options"');
  if (reduce !== undefined && map === undefined)
    throw new PlanSpecError('SPEC_INVALID', key, '"reduce" needs a "map"');
  try {
    const checkedMap = map === undefined ? undefined : checkStep('map', map);
    const checkedReduce = reduce === undefined ? undefined : checkStep('reduce', reduce);
    return {
      options: {
        ...(checkedMap === undefined ? {} : { map: checkedMap }),
        ...(checkedReduce === undefined ? {} : { reduce: checkedReduce }),
      },
      functions: [checkedMap?.fn, checkedReduce?.fn].filter(
        (name): name is string => name !== undefined,
      ),
    };
  } catch (error) {
    throw new PlanSpecError('SPEC_INVALID', key, (error as Error).message);
  }
}

/** A map's and a reduce's params with their `{ $param: name }` placeholders filled, as a task's own are. */
function fillStepParams<T extends { options: { map?: MapStep; reduce?: MapStep } }>(
  key: string,
  steps: T,
  values: Readonly<Record<string, unknown>>,
): T {
  const fill = (step: MapStep | undefined): MapStep | undefined =>
    step === undefined
      ? undefined
      : { ...step, params: fillParams(key, step.params ?? [], values) };
  const map = fill(steps.options.map);
  const reduce = fill(steps.options.reduce);
  return {
    ...steps,
    options: {
      ...(map === undefined ? {} : { map }),
      ...(reduce === undefined ? {} : { reduce }),
    },
  };
}

/**
 * A sub-plan task's params: its placeholders filled, except in the child's inline `spec`, whose
 * placeholders are the child's own (filled from the sub-plan's params and inputs when it is made).
 */
function fillSubPlanParams(
  key: string,
  params: readonly unknown[],
  values: Readonly<Record<string, unknown>>,
): unknown[] {
  const [definition, ...rest] = params;
  if (typeof definition !== 'object' || definition === null || !('spec' in definition))
    return fillParams(key, params, values);
  const { spec, ...fields } = definition as Record<string, unknown>;
  const [filled] = fillParams(key, [fields], values);
  return [{ ...(filled as object), spec }, ...fillParams(key, rest, values)];
}

/** A sub-plan task's definition, and its inputs named once each, in order. */
function checkSubPlanTask(key: string, definition: unknown, inputs: unknown): void {
  let names: readonly string[];
  try {
    names = checkSubPlan(definition, `task "${key}"`).inputs;
  } catch (error) {
    if (!(error instanceof InvalidArgumentError)) throw error;
    throw new PlanSpecError('SPEC_PARAM_INVALID', key, `its sub-plan is invalid: ${error.message}`);
  }
  const count = Array.isArray(inputs) ? inputs.length : 0;
  if (names.length !== count)
    throw new PlanSpecError(
      'SPEC_PARAM_INVALID',
      key,
      `its sub-plan names ${names.length} param(s) in "inputs" for ${count} input(s): name each input once, in order`,
    );
}

/** Replaces every `{ $param: name }` (at any depth) by its value. */
function fillParams(
  key: string,
  params: readonly unknown[],
  values: Readonly<Record<string, unknown>>,
): unknown[] {
  const fill = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(fill);
    if (
      typeof value !== 'object' ||
      value === null ||
      Object.getPrototypeOf(value) !== Object.prototype
    )
      return value;
    const record = value as Record<string, unknown>;
    if (Object.keys(record).length === 1 && typeof record['$param'] === 'string') {
      const name = record['$param'];
      if (!Object.hasOwn(values, name))
        throw new PlanSpecError(
          'SPEC_MISSING_PARAM',
          key,
          `placeholder { $param: "${name}" } has no value: pass params: { ${name}: … } (--param ${name}=… on the command line)`,
        );
      return values[name];
    }
    return Object.fromEntries(Object.entries(record).map(([field, inner]) => [field, fill(inner)]));
  };
  return params.map(fill);
}

/**
 * The tasks as positions (spec order) and their inputs as positions, CSR-style: task t's inputs
 * are `inputs[starts[t]]` … `inputs[starts[t + 1] - 1]`, in its order, repeats included.
 */
interface InputGraph {
  readonly keys: readonly string[];
  readonly starts: Int32Array;
  readonly inputs: Int32Array;
}

/**
 * The graph of the tasks `keys`, `inputsOf[t]` being the input keys of `keys[t]`; SPEC_UNKNOWN_INPUT
 * names the first task (in spec order) with an input that is not a task, as before.
 */
function inputGraph(keys: readonly string[], inputsOf: readonly (readonly string[])[]): InputGraph {
  const position = new Map<string, number>();
  let edgeCount = 0;
  for (let task = 0; task < keys.length; task++) {
    position.set(keys[task] as string, task);
    edgeCount += (inputsOf[task] as readonly string[]).length;
  }
  const starts = new Int32Array(keys.length + 1);
  const inputs = new Int32Array(edgeCount);
  let edge = 0;
  for (let task = 0; task < keys.length; task++) {
    starts[task] = edge;
    for (const input of inputsOf[task] as readonly string[]) {
      const at = position.get(input);
      if (at === undefined)
        throw new PlanSpecError(
          'SPEC_UNKNOWN_INPUT',
          keys[task],
          `input "${input}" is not a task of the spec (its keys: ${keys.join(', ')})`,
        );
      inputs[edge++] = at;
    }
  }
  starts[keys.length] = edge;
  return { keys, starts, inputs };
}

/**
 * Kahn's order over the inputs, keys in spec order among equals; SPEC_CYCLE names a task on a cycle.
 * Linear in the tasks and inputs: positions and typed arrays (no array copied per edge, no key
 * looked up again), each task's users laid out once, and the ready tasks a queue read by an index.
 */
function topologicalOrder({ keys, starts, inputs }: InputGraph): string[] {
  const count = keys.length;
  // An input repeated by one task counts once: `firstUse` marks each edge that is its task's first to that input.
  const firstUse = new Uint8Array(inputs.length);
  const lastUser = new Int32Array(count).fill(-1);
  const pending = new Int32Array(count);
  const userStarts = new Int32Array(count + 1);
  for (let task = 0; task < count; task++)
    for (let edge = starts[task] as number; edge < (starts[task + 1] as number); edge++) {
      const input = inputs[edge] as number;
      if (lastUser[input] === task) continue;
      lastUser[input] = task;
      firstUse[edge] = 1;
      pending[task] = (pending[task] as number) + 1;
      userStarts[input + 1] = (userStarts[input + 1] as number) + 1;
    }
  for (let task = 0; task < count; task++)
    userStarts[task + 1] = (userStarts[task + 1] as number) + (userStarts[task] as number);
  // The users of each task, in spec order: those of task t are users[userStarts[t]] … users[userStarts[t + 1] - 1].
  const users = new Int32Array(userStarts[count] as number);
  const filled = userStarts.slice(0, count);
  for (let task = 0; task < count; task++)
    for (let edge = starts[task] as number; edge < (starts[task + 1] as number); edge++) {
      if (firstUse[edge] === 0) continue;
      const input = inputs[edge] as number;
      users[filled[input] as number] = task;
      filled[input] = (filled[input] as number) + 1;
    }
  // The queue: tasks before `next` are ordered and their users counted down, those from `next` to `end` are ready.
  const queue = new Int32Array(count);
  let end = 0;
  for (let task = 0; task < count; task++) if (pending[task] === 0) queue[end++] = task;
  for (let next = 0; next < end; next++) {
    const task = queue[next] as number;
    for (let at = userStarts[task] as number; at < (userStarts[task + 1] as number); at++) {
      const user = users[at] as number;
      pending[user] = (pending[user] as number) - 1;
      if (pending[user] === 0) queue[end++] = user;
    }
  }
  if (end < count) {
    const cycle = findCycle({ keys, starts, inputs }, pending);
    throw new PlanSpecError(
      'SPEC_CYCLE',
      cycle[0],
      `the inputs form a cycle: ${[...cycle, cycle[0]].join(' ← ')}`,
    );
  }
  const order = new Array<string>(count);
  for (let at = 0; at < count; at++) order[at] = keys[queue[at] as number] as string;
  return order;
}

/**
 * A cycle among the tasks not ordered (those still `pending` an input): from the first of them in
 * spec order, each one's first input not ordered leads round (every one has such an input). Each
 * task is visited once: its place on the path is kept by position.
 */
function findCycle({ keys, starts, inputs }: InputGraph, pending: Int32Array): string[] {
  const placeOnPath = new Int32Array(keys.length).fill(-1);
  const path: number[] = [];
  let current = pending.findIndex((left) => left > 0);
  while (placeOnPath[current] === -1) {
    placeOnPath[current] = path.length;
    path.push(current);
    let next = -1;
    for (
      let edge = starts[current] as number;
      edge < (starts[current + 1] as number) && next === -1;
      edge++
    )
      if ((pending[inputs[edge] as number] as number) > 0) next = inputs[edge] as number;
    current = next;
  }
  return path.slice(placeOnPath[current]).map((task) => keys[task] as string);
}
