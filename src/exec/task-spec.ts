import { Script } from 'node:vm';
import { MalformedNodeError } from '../errors/task-errors.js';
import { InvalidArgumentError } from '../errors/usage-errors.js';
import { assertSerializable } from '../serialization/codec.js';
import { assertFunctionName } from './function-name.js';
import type { RetryPolicy } from '../config/plan-options.js';
import { taskKeyProblem } from '../plan/names.js';
import { checkStep, type MapStep } from '../spawn/map-step.js';
import { DEFAULT_TRIGGER, isTriggerRule, type TriggerRule } from '../trigger/trigger-rule.js';

/**
 * A task that calls a registered function with bound params: built by `call()`.
 *
 * @category Plans and tasks
 */
export interface CallSpec {
  readonly kind: 'call';
  readonly fn: string;
  readonly params: readonly unknown[];
}

/**
 * A task that runs function source in a sandbox: built by `inline()`.
 *
 * @category Plans and tasks
 */
export interface InlineSpec {
  readonly kind: 'inline';
  readonly source: string;
}

/**
 * What a task runs: a registered function with its params (`call`), or an inline function's source (`inline`).
 *
 * @category Plans and tasks
 */
export type TaskSpec = CallSpec | InlineSpec;

/** Per-task settings stored with the definition; all optional. */
export interface TaskSettings {
  /** Keep the result in the plan after the task is done (for `getResult`). */
  readonly keepResult?: boolean;
  /** Overrides of the plan's retry policy for this task. */
  readonly retry?: RetryPolicy;
  /** Time limit of one run of the function, in ms; its signal is aborted and the try fails. */
  readonly timeoutMs?: number;
  /** The task's own priority (a whole number, higher first); without one, its plan's applies. */
  readonly priority?: number;
  /** Runs only while a slot of this key's cluster-wide limit is free (`limits(parent).set`). */
  readonly concurrencyKey?: string;
  /**
   * The task's key within its plan (its spec's key, or `addTask(…, { key })`): stored with the
   * definition, so that whoever reads the task (a worker, `show`, the web view) knows it at once.
   */
  readonly key?: string;
  /** Its result, a list, is mapped over a task per item (src/spawn/map-over.ts). */
  readonly map?: MapStep;
  /** With `map`: the task over the mapped results whose result becomes this task's. */
  readonly reduce?: MapStep;
  /** When it runs, given how its inputs ended (src/trigger); absent: `allSucceeded`. */
  readonly trigger?: TriggerRule;
}

/** What a task node's value holds (the wire format other programs may write too). */
export type TaskDefinition =
  | ({ readonly fn: string; readonly params: readonly unknown[] } & TaskSettings)
  | ({ readonly source: string } & TaskSettings);

/**
 * A task calling the registered function `fn` with `params` bound into `ctx.params`.
 *
 * @category Plans and tasks
 */
export function call(fn: string, ...params: unknown[]): CallSpec {
  assertFunctionName(fn);
  assertSerializable(params, `params of call('${fn}')`);
  return { kind: 'call', fn, params };
}

/**
 * A task whose code travels in the plan: the function's source is stored and run in a vm2
 * sandbox (no `require`, no `process`, no timers) inside a worker thread, terminated at the time
 * limit, by workers started with `allowInline: true`. The function sees only copies of its
 * arguments and `ctx` (params, task, plan, workerId): no closure, no signal, no container.
 *
 * @category Plans and tasks
 */
export function inline(fn: (...args: never[]) => unknown): InlineSpec {
  if (typeof fn !== 'function')
    throw new InvalidArgumentError('fn', `inline() takes a function, got ${typeof fn}`);
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
    if (!Array.isArray(candidate.params))
      throw new InvalidArgumentError('task', 'call spec needs a params array');
    return;
  }
  if (candidate.kind === 'inline') {
    if (typeof candidate.source !== 'string' || candidate.source === '')
      throw new InvalidArgumentError('task', 'inline spec needs source text');
    return;
  }
  throw new InvalidArgumentError(
    'task',
    `unknown task kind ${JSON.stringify(candidate.kind)}; use call() or inline()`,
  );
}

/** The value stored in a task node for a spec; settings left at their defaults are not stored. */
export function toDefinition(spec: TaskSpec, settings: TaskSettings = {}): TaskDefinition {
  const base =
    spec.kind === 'call' ? { fn: spec.fn, params: spec.params } : { source: spec.source };
  return {
    ...base,
    ...(settings.keepResult ? { keepResult: true } : {}),
    ...(settings.retry !== undefined && Object.keys(settings.retry).length > 0
      ? { retry: settings.retry }
      : {}),
    ...(settings.timeoutMs !== undefined ? { timeoutMs: settings.timeoutMs } : {}),
    ...(settings.priority !== undefined ? { priority: settings.priority } : {}),
    ...(settings.concurrencyKey !== undefined ? { concurrencyKey: settings.concurrencyKey } : {}),
    ...(settings.key !== undefined ? { key: settings.key } : {}),
    ...(settings.map !== undefined ? { map: settings.map } : {}),
    ...(settings.reduce !== undefined ? { reduce: settings.reduce } : {}),
    // The default is not stored: a plan without rules is written exactly as before they existed.
    ...(settings.trigger !== undefined && settings.trigger !== DEFAULT_TRIGGER
      ? { trigger: settings.trigger }
      : {}),
  };
}

/** Validates a decoded task node value; throws MalformedNodeError naming the task otherwise. */
export function parseDefinition(task: string, value: unknown): TaskDefinition {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new MalformedNodeError(task, 'its value must be an object { fn, params } or { source }');
  }
  const record = value as Record<string, unknown>;
  const settings = parseSettings(task, record);
  if (typeof record['fn'] === 'string') {
    const params = record['params'] === undefined ? [] : record['params'];
    if (!Array.isArray(params)) throw new MalformedNodeError(task, '"params" must be an array');
    return { fn: record['fn'], params, ...settings };
  }
  if (typeof record['source'] === 'string') {
    return { source: record['source'], ...settings };
  }
  throw new MalformedNodeError(
    task,
    'its value has neither a string "fn" (registered function) nor a string "source" (inline function)',
  );
}

function parseSettings(task: string, record: Record<string, unknown>): TaskSettings {
  const { keepResult, retry, timeoutMs, priority, concurrencyKey, key, map, reduce, trigger } =
    record;
  if (keepResult !== undefined && typeof keepResult !== 'boolean')
    throw new MalformedNodeError(task, 'keepResult must be a boolean when present');
  if (
    retry !== undefined &&
    (typeof retry !== 'object' || retry === null || Array.isArray(retry))
  ) {
    throw new MalformedNodeError(
      task,
      'retry must be an object { maxAttempts?, initialDelayMs?, multiplier?, maxDelayMs? } when present',
    );
  }
  if (timeoutMs !== undefined && (typeof timeoutMs !== 'number' || !(timeoutMs > 0)))
    throw new MalformedNodeError(task, 'timeoutMs must be a number > 0 when present');
  if (priority !== undefined && !Number.isSafeInteger(priority))
    throw new MalformedNodeError(task, 'priority must be a whole number when present');
  if (concurrencyKey !== undefined && (typeof concurrencyKey !== 'string' || concurrencyKey === ''))
    throw new MalformedNodeError(task, 'concurrencyKey must be a non-empty string when present');
  if (key !== undefined && (typeof key !== 'string' || key === ''))
    throw new MalformedNodeError(task, 'key must be a non-empty string when present');
  if (trigger !== undefined && !isTriggerRule(trigger))
    throw new MalformedNodeError(
      task,
      'trigger must be allSucceeded, allDone, anySucceeded or oneFailed when present',
    );
  return {
    ...(keepResult ? { keepResult } : {}),
    ...(retry !== undefined ? { retry: retry as RetryPolicy } : {}),
    ...(timeoutMs !== undefined ? { timeoutMs } : {}),
    ...(priority !== undefined ? { priority: priority as number } : {}),
    ...(concurrencyKey !== undefined ? { concurrencyKey: concurrencyKey as string } : {}),
    // A key is a label: one that is not a valid key (another tool's value) is left out, never a reason to fail the task.
    ...(taskKeyProblem(key) === undefined ? { key: key as string } : {}),
    ...(map !== undefined ? { map: storedStep(task, 'map', map) } : {}),
    ...(reduce !== undefined ? { reduce: storedStep(task, 'reduce', reduce) } : {}),
    ...(trigger !== undefined && trigger !== DEFAULT_TRIGGER ? { trigger } : {}),
  };
}

/** A stored map or reduce, checked as addTask checks it; MalformedNodeError otherwise. */
function storedStep(task: string, name: 'map' | 'reduce', value: unknown): MapStep {
  try {
    return checkStep(name, value);
  } catch (error) {
    throw new MalformedNodeError(
      task,
      `its ${name} is not one addTask makes: ${(error as Error).message}`,
    );
  }
}
