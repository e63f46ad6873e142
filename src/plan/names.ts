/**
 * What a task key and a plan name may be (pure). A key names a task within its plan (a spec's task
 * keys, `addTask(…, { key })`); a plan name is a label for people (`createPlan(parent, { name })`,
 * a spec's `name`, a schedule's). Both are printed in tables, logs and the web view and travel in
 * znode values, so both are bounded and free of control characters; a key is also typed on the
 * command line (`zk-plan why <plan> <key>`) and is part of a znode name (URI-encoded, see
 * keyClaimName in src/zk/layout.ts).
 */
import { InvalidArgumentError } from '../errors/usage-errors.js';

/** The longest task key, in UTF-16 code units. */
export const MAX_TASK_KEY_LENGTH = 200;
/** The longest plan name, in UTF-16 code units. */
export const MAX_PLAN_NAME_LENGTH = 200;

/* eslint-disable-next-line no-control-regex -- refusing control characters is the point */
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
/** A UTF-16 surrogate without its pair: no text a person typed, and encodeURIComponent refuses it. */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** Why `value` cannot be a task key, or undefined when it can. */
export function taskKeyProblem(value: unknown): string | undefined {
  return textProblem(value, MAX_TASK_KEY_LENGTH, 'a task key');
}

/** Why `value` cannot be a plan name, or undefined when it can. */
export function planNameProblem(value: unknown): string | undefined {
  return textProblem(value, MAX_PLAN_NAME_LENGTH, 'a plan name');
}

/** Validates a task key given to addTask or addTasks (InvalidArgumentError naming `argument`). */
export function assertTaskKey(argument: string, value: unknown): asserts value is string {
  const problem = taskKeyProblem(value);
  if (problem !== undefined) throw new InvalidArgumentError(argument, problem);
}

/** Validates a plan name given to createPlan (InvalidArgumentError naming `argument`). */
export function assertPlanName(argument: string, value: unknown): asserts value is string {
  const problem = planNameProblem(value);
  if (problem !== undefined) throw new InvalidArgumentError(argument, problem);
}

function textProblem(value: unknown, maxLength: number, what: string): string | undefined {
  if (typeof value !== 'string')
    return `${what} is a string, got ${value === null ? 'null' : typeof value}`;
  if (value.trim() === '') return `${what} must not be empty or blank`;
  if (value.length > maxLength)
    return `${what} has at most ${maxLength} characters, got ${value.length}`;
  if (CONTROL.test(value))
    return `${what} must not hold control characters (line breaks, tabs, escapes), got ${JSON.stringify(value)}`;
  if (LONE_SURROGATE.test(value))
    return `${what} must be well-formed text (it holds half of a surrogate pair)`;
  return undefined;
}
