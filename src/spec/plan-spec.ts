/**
 * Declarative plan definitions: a spec names its tasks by key, each with a registered function,
 * its params and the keys of its inputs in argument order; `{ $param: name }` in params is
 * replaced by a named parameter at submit. `checkPlanSpec` (pure) validates a spec completely
 * before anything is written and orders its tasks so that every input comes before its user.
 */
import type { PlanOptions } from '../config/plan-options.js';
import { PlanSpecError } from '../errors/spec-errors.js';
import { assertFunctionName } from '../exec/function-registry.js';
import type { AddTaskOptions } from '../plan/task-options.js';
import { assertSerializable } from '../serialization/codec.js';
import { checkArity, type SchemasOf } from './typed-edges.js';

/** One task of a spec. */
export interface TaskSpecEntry {
  /** The registered function. */
  readonly fn: string;
  /** Bound into `ctx.params`; `{ $param: 'name' }` anywhere in them is replaced at submit. */
  readonly params?: readonly unknown[];
  /** Keys of the tasks whose results are its inputs, in argument order (a key may repeat). */
  readonly inputs?: readonly string[];
  /** `addTask`'s options (keepResult, retries, timeoutMs, priority, concurrencyKey). */
  readonly options?: AddTaskOptions;
}

/** A serialisable plan definition: written in TypeScript, or as JSON for the CLI. */
export interface PlanSpec {
  readonly tasks: Readonly<Record<string, TaskSpecEntry>>;
  readonly options?: PlanOptions;
}

/** A placeholder in params: replaced at submit by the named parameter. */
export interface ParamPlaceholder {
  readonly $param: string;
}

/** What checking a spec yields: its tasks in an order where inputs come first, params filled in. */
export interface CheckedSpec {
  readonly order: readonly string[];
  readonly tasks: ReadonlyMap<
    string,
    { readonly fn: string; readonly params: readonly unknown[]; readonly inputs: readonly string[]; readonly options: AddTaskOptions }
  >;
  readonly options: PlanOptions;
}

/** What a spec is checked against. */
export interface SpecContext {
  /** Names a function must have (the submitting process's registry; empty: not checked). */
  readonly registered: readonly string[];
  /** Functions of the live workers of the parent; undefined when none is live (then not checked). */
  readonly live?: readonly (readonly string[])[];
  /** Values of `{ $param }` placeholders. */
  readonly params: Readonly<Record<string, unknown>>;
  /** The schemas a function was registered with (typed edges: arity is checked here; values and edge types by checkSpecValues). */
  readonly schemasOf?: SchemasOf;
}

const ENTRY_KEYS = new Set(['fn', 'params', 'inputs', 'options']);

/** Checks `spec` against `context`; throws PlanSpecError naming the task for the first problem. */
export function checkPlanSpec(spec: unknown, context: SpecContext): CheckedSpec {
  if (typeof spec !== 'object' || spec === null || Array.isArray(spec))
    throw new PlanSpecError('SPEC_INVALID', undefined, 'expected an object { tasks: { [key]: { fn, params?, inputs?, options? } }, options? }');
  const { tasks, options } = spec as { tasks?: unknown; options?: unknown };
  for (const key of Object.keys(spec))
    if (key !== 'tasks' && key !== 'options') throw new PlanSpecError('SPEC_INVALID', undefined, `unknown field "${key}" (a spec has tasks and options)`);
  if (typeof tasks !== 'object' || tasks === null || Array.isArray(tasks) || Object.keys(tasks).length === 0) {
    throw new PlanSpecError('SPEC_INVALID', undefined, '"tasks" must be an object with at least one task, by key');
  }
  if (options !== undefined && (typeof options !== 'object' || options === null || Array.isArray(options)))
    throw new PlanSpecError('SPEC_INVALID', undefined, '"options" must be an object of createPlan options');
  const entries = new Map<string, { fn: string; params: readonly unknown[]; inputs: readonly string[]; options: AddTaskOptions }>();
  for (const [key, raw] of Object.entries(tasks as Record<string, unknown>)) entries.set(key, checkEntry(key, raw, context));
  for (const [key, entry] of entries) {
    for (const input of entry.inputs)
      if (!entries.has(input))
        throw new PlanSpecError('SPEC_UNKNOWN_INPUT', key, `input "${input}" is not a task of the spec (its keys: ${[...entries.keys()].join(', ')})`);
  }
  const order = topologicalOrder(entries);
  if (context.schemasOf !== undefined) checkArity(entries, context.schemasOf);
  return { order, tasks: entries, options: (options ?? {}) as PlanOptions };
}

function checkEntry(
  key: string,
  raw: unknown,
  context: SpecContext,
): { fn: string; params: readonly unknown[]; inputs: readonly string[]; options: AddTaskOptions } {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    throw new PlanSpecError('SPEC_INVALID', key, 'expected { fn, params?, inputs?, options? }');
  const entry = raw as Record<string, unknown>;
  for (const field of Object.keys(entry))
    if (!ENTRY_KEYS.has(field)) throw new PlanSpecError('SPEC_INVALID', key, `unknown field "${field}" (a task has fn, params, inputs and options)`);
  const { fn, params = [], inputs = [], options = {} } = entry;
  try {
    assertFunctionName(fn);
  } catch (error) {
    throw new PlanSpecError('SPEC_INVALID', key, (error as Error).message);
  }
  if (!Array.isArray(params)) throw new PlanSpecError('SPEC_INVALID', key, '"params" must be an array');
  if (!Array.isArray(inputs) || inputs.some((input) => typeof input !== 'string'))
    throw new PlanSpecError('SPEC_INVALID', key, '"inputs" must be an array of task keys');
  if (typeof options !== 'object' || options === null || Array.isArray(options))
    throw new PlanSpecError('SPEC_INVALID', key, '"options" must be an object of addTask options');
  if (context.registered.length > 0 && !context.registered.includes(fn)) {
    throw new PlanSpecError('SPEC_UNKNOWN_FUNCTION', key, `function "${fn}" is not registered (registered: ${context.registered.join(', ')})`);
  }
  if (context.live !== undefined && context.live.length > 0 && !context.live.some((functions) => functions.length === 0 || functions.includes(fn))) {
    throw new PlanSpecError('SPEC_UNKNOWN_FUNCTION', key, `no live worker of the parent registers "${fn}"`);
  }
  const filled = fillParams(key, params, context.params);
  try {
    assertSerializable(filled, `params of task "${key}"`);
    assertSerializable(options, `options of task "${key}"`);
  } catch (error) {
    throw new PlanSpecError('SPEC_UNSERIALIZABLE', key, (error as Error).message);
  }
  return { fn, params: filled, inputs: inputs as string[], options: options as AddTaskOptions };
}

/** Replaces every `{ $param: name }` (at any depth) by its value. */
function fillParams(key: string, params: readonly unknown[], values: Readonly<Record<string, unknown>>): unknown[] {
  const fill = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(fill);
    if (typeof value !== 'object' || value === null || Object.getPrototypeOf(value) !== Object.prototype) return value;
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

/** Kahn's order over the inputs, keys in spec order among equals; SPEC_CYCLE names a task on a cycle. */
function topologicalOrder(entries: ReadonlyMap<string, { inputs: readonly string[] }>): string[] {
  const pending = new Map([...entries].map(([key, entry]) => [key, new Set(entry.inputs).size]));
  const users = new Map<string, string[]>();
  for (const [key, entry] of entries) for (const input of new Set(entry.inputs)) users.set(input, [...(users.get(input) ?? []), key]);
  const ready = [...entries.keys()].filter((key) => pending.get(key) === 0);
  const order: string[] = [];
  while (ready.length > 0) {
    const key = ready.shift() as string;
    order.push(key);
    for (const user of users.get(key) ?? []) {
      const left = (pending.get(user) as number) - 1;
      pending.set(user, left);
      if (left === 0) ready.push(user);
    }
  }
  if (order.length < entries.size) {
    const cycle = findCycle(entries, new Set(order));
    throw new PlanSpecError('SPEC_CYCLE', cycle[0], `the inputs form a cycle: ${[...cycle, cycle[0]].join(' ← ')}`);
  }
  return order;
}

/** A cycle among the tasks not ordered: from any of them, inputs that are not ordered lead round (every one has such an input). */
function findCycle(entries: ReadonlyMap<string, { inputs: readonly string[] }>, ordered: ReadonlySet<string>): string[] {
  const path: string[] = [];
  let current = [...entries.keys()].find((key) => !ordered.has(key)) as string;
  while (!path.includes(current)) {
    path.push(current);
    current = (entries.get(current) as { inputs: readonly string[] }).inputs.find((input) => !ordered.has(input)) as string;
  }
  return path.slice(path.indexOf(current));
}
