/**
 * How an input ended, as its dependent sees it. A skipped task, and a failed one handed on to a
 * task whose trigger rule takes failures, leave a marked value in their dependents' `arg-N`: an
 * object whose `zk-plan:outcome` field says `skipped` or `failed`. Every other value is a result.
 * Pure: the stored shapes and their check when read back (anyone may write an `arg-N`, so every
 * text read is cut to a bound).
 */

/** The field that marks a stored value as a skip or a failure rather than a result. */
export const OUTCOME_FIELD = 'zk-plan:outcome';

/** The longest text kept from a stored outcome. */
const MAX_OUTCOME_TEXT = 2_000;

/**
 * An input's failure, as a task with a trigger rule receives it.
 *
 * @category Plans and tasks
 */
export interface InputFailure {
  /** The task that failed for good. */
  readonly task: string;
  /** Its key, when it has one. */
  readonly key?: string;
  /** Its failure's stable code (`TASK_FAILED`, `TASK_TIMEOUT`, the thrown error's own `code`, …). */
  readonly code: string;
  /** The thrown error's class name. */
  readonly type: string;
  readonly message: string;
  /** The task whose output this input is, when it is not the failed task: it is blocked by that failure. */
  readonly blocked?: string;
}

/**
 * How one input ended: what a task whose trigger rule is not `allSucceeded` receives for each of
 * its inputs, in order.
 *
 * @category Plans and tasks
 */
export type InputOutcome<T = unknown> =
  | { readonly status: 'succeeded'; readonly value: T }
  | { readonly status: 'failed'; readonly error: InputFailure }
  | {
      readonly status: 'skipped';
      readonly reason: string;
      /**
       * Where the skip began: the task that returned `skip(reason)`, or one that `anySucceeded` or
       * `oneFailed` skipped. A skip passed on under the default rule keeps the task it began at.
       */
      readonly task: string;
    };

/** The value stored for a skipped task: handed to its dependents, and kept when it keeps its result. */
export function skippedValue(reason: string, task: string): Record<string, unknown> {
  return { [OUTCOME_FIELD]: 'skipped', reason: cut(reason), task };
}

/** The value handed to a dependent whose rule takes failures, for an input that failed for good. */
export function failedValue(failure: InputFailure): Record<string, unknown> {
  return {
    [OUTCOME_FIELD]: 'failed',
    task: failure.task,
    ...(failure.key === undefined ? {} : { key: failure.key }),
    code: cut(failure.code),
    type: cut(failure.type),
    message: cut(failure.message),
    ...(failure.blocked === undefined ? {} : { blocked: failure.blocked }),
  };
}

/** Whether a value carries the outcome mark at its top level (a function may not return one of its own making). */
export function carriesOutcomeMark(value: unknown): boolean {
  return (
    typeof value === 'object' && value !== null && !Array.isArray(value) && OUTCOME_FIELD in value
  );
}

/**
 * What a stored input means: a skip, a failure, or (everything else, a malformed mark included) a
 * result.
 */
export function outcomeOf(value: unknown): InputOutcome {
  if (!carriesOutcomeMark(value)) return { status: 'succeeded', value };
  const record = value as Record<string, unknown>;
  const mark = record[OUTCOME_FIELD];
  const task = text(record['task']);
  if (mark === 'skipped' && task !== undefined)
    return { status: 'skipped', reason: text(record['reason']) ?? 'skipped', task };
  if (mark === 'failed' && task !== undefined) {
    const key = text(record['key']);
    const blocked = text(record['blocked']);
    return {
      status: 'failed',
      error: {
        task,
        ...(key === undefined ? {} : { key }),
        code: text(record['code']) ?? 'ERROR',
        type: text(record['type']) ?? 'Error',
        message: text(record['message']) ?? '',
        ...(blocked === undefined ? {} : { blocked }),
      },
    };
  }
  return { status: 'succeeded', value };
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' ? cut(value) : undefined;
}

function cut(value: string): string {
  return value.slice(0, MAX_OUTCOME_TEXT);
}
