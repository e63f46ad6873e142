import { Script } from 'node:vm';
import { MalformedNodeError } from '../errors/task-errors.js';
import { InvalidArgumentError } from '../errors/usage-errors.js';
import { assertSerializable } from '../serialization/codec.js';
import { assertFunctionName } from './function-registry.js';
import type { TaskFunction } from './task-context.js';

/** A task that calls a registered function with bound params: built by `call()`. */
export interface CallSpec {
  readonly kind: 'call';
  readonly fn: string;
  readonly params: readonly unknown[];
}

/** A task that runs function source in a sandbox: built by `inline()`. */
export interface InlineSpec {
  readonly kind: 'inline';
  readonly source: string;
}

export type TaskSpec = CallSpec | InlineSpec;

/** What a task node's value holds (the wire format other programs may write too). */
export type TaskDefinition =
  | { readonly fn: string; readonly params: readonly unknown[]; readonly keepResult?: boolean }
  | { readonly source: string; readonly keepResult?: boolean };

/** A task calling the registered function `fn` with `params` bound into `ctx.params`. */
export function call(fn: string, ...params: unknown[]): CallSpec {
  assertFunctionName(fn);
  assertSerializable(params, `params of call('${fn}')`);
  return { kind: 'call', fn, params };
}

/**
 * A task whose code travels in the plan: the function's source is stored and run in a vm2
 * sandbox (no `require`, no `process`, a time limit) by workers started with `allowInline: true`.
 * The function sees only its arguments and `ctx` (params, task, plan, workerId): no closure.
 */
export function inline(fn: TaskFunction<never[], never[]> | ((...args: never[]) => unknown)): InlineSpec {
  if (typeof fn !== 'function') throw new InvalidArgumentError('fn', `inline() takes a function, got ${typeof fn}`);
  const source = fn.toString();
  assertFunctionExpression(source);
  return { kind: 'inline', source };
}

/** Checks the source parses as a function expression, without running it. */
function assertFunctionExpression(source: string): void {
  try {
    new Script(`(${source})`);
  } catch {
    throw new InvalidArgumentError(
      'fn',
      'inline() needs an arrow function or a function expression (a method shorthand or a native function has no portable source)',
    );
  }
  if (/\{\s*\[native code\]\s*\}\s*$/.test(source)) {
    throw new InvalidArgumentError('fn', 'inline() cannot store a native or bound function');
  }
}

/** Validates a spec passed to `addTask`. */
export function assertTaskSpec(spec: unknown): asserts spec is TaskSpec {
  if (typeof spec !== 'object' || spec === null || !('kind' in spec)) {
    throw new InvalidArgumentError('task', 'expected call(name, ...params) or inline(fn)');
  }
  const candidate = spec as { kind: unknown; fn?: unknown; params?: unknown; source?: unknown };
  if (candidate.kind === 'call') {
    assertFunctionName(candidate.fn);
    if (!Array.isArray(candidate.params)) throw new InvalidArgumentError('task', 'call spec needs a params array');
    return;
  }
  if (candidate.kind === 'inline') {
    if (typeof candidate.source !== 'string' || candidate.source === '') throw new InvalidArgumentError('task', 'inline spec needs source text');
    return;
  }
  throw new InvalidArgumentError('task', `unknown task kind ${JSON.stringify(candidate.kind)}; use call() or inline()`);
}

/** The value stored in a task node for a spec. */
export function toDefinition(spec: TaskSpec, keepResult: boolean): TaskDefinition {
  const base = spec.kind === 'call' ? { fn: spec.fn, params: spec.params } : { source: spec.source };
  return keepResult ? { ...base, keepResult: true } : base;
}

/** Validates a decoded task node value; throws MalformedNodeError naming the task otherwise. */
export function parseDefinition(task: string, value: unknown): TaskDefinition {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new MalformedNodeError(task, 'its value must be an object { fn, params } or { source }');
  }
  const record = value as Record<string, unknown>;
  const keepResult = record['keepResult'];
  if (keepResult !== undefined && typeof keepResult !== 'boolean') {
    throw new MalformedNodeError(task, 'keepResult must be a boolean when present');
  }
  if (typeof record['fn'] === 'string') {
    const params = record['params'] === undefined ? [] : record['params'];
    if (!Array.isArray(params)) throw new MalformedNodeError(task, '"params" must be an array');
    return { fn: record['fn'], params, ...(keepResult ? { keepResult } : {}) };
  }
  if (typeof record['source'] === 'string') {
    return { source: record['source'], ...(keepResult ? { keepResult } : {}) };
  }
  throw new MalformedNodeError(task, 'its value has neither a string "fn" (registered function) nor a string "source" (inline function)');
}
