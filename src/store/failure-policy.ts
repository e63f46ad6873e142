import { SpawnMismatchError } from '../errors/spawn-errors.js';
import { InputFailedError } from '../errors/trigger-errors.js';
import { retryDelayMs, type ResolvedRetryPolicy } from '../config/plan-options.js';
import { ZkPlanError } from '../errors/base-error.js';
import { PermanentError } from '../errors/task-errors.js';
import type { FailedTry } from './task-tries.js';

/**
 * A task's failed try as recorded in ZooKeeper (`task/attempts` and `task/failed`): plain data, readable by any tool.
 *
 * @category Plan status
 */
export interface TaskFailure {
  /** Error class name, e.g. `TaskExecutionError`, or the thrown value's class. */
  readonly type: string;
  readonly message: string;
  /** Stable code: the zk-plan error code, or the thrown error's own `code` when it has one. */
  readonly code: string;
  readonly stack: string | undefined;
  /** False when trying again cannot help (PermanentError, a malformed task, an unstorable result). */
  readonly retryable: boolean;
  /** Tries made so far, this one included. */
  readonly attempts: number;
  readonly workerId: string;
  readonly at: Date;
}

/** What `task/attempts` holds: failed tries so far, when the next may start, the last failure, and the latest failed tries (src/store/task-tries.ts). */
export interface AttemptRecord {
  readonly failures: number;
  readonly notBefore: Date;
  readonly lastFailure: TaskFailure;
  /** The latest failed tries, oldest first, at most MAX_KEPT_TRIES; absent in records of earlier versions. */
  readonly tries?: readonly FailedTry[];
}

/** A stored failure (`task/failed`, a history record's), checked field by field; undefined when it is not one zk-plan writes. */
export function parseTaskFailure(value: unknown): TaskFailure | undefined {
  // Anything else but null and undefined can be taken apart: a string or a number has none of the fields, and is refused below.
  if (value === null || value === undefined) return undefined;
  const { type, message, code, stack, retryable, attempts, workerId, at } = value as Record<
    string,
    unknown
  >;
  if (
    typeof type !== 'string' ||
    typeof message !== 'string' ||
    typeof code !== 'string' ||
    typeof workerId !== 'string'
  )
    return undefined;
  if (stack !== undefined && typeof stack !== 'string') return undefined;
  if (!Number.isSafeInteger(attempts) || !(at instanceof Date) || Number.isNaN(at.getTime()))
    return undefined;
  return {
    type,
    message,
    code,
    stack,
    retryable: retryable === true,
    attempts: attempts as number,
    workerId,
    at,
  };
}

/**
 * Whether a failure is charged to the task, and whether it is permanent, as the error says of
 * itself (`charged`, `retryable`; a PermanentError thrown by the function makes it permanent).
 * ZooKeeper and session faults, lost ownership and shutdown aborts are infrastructure: never charged.
 */
export function judgeFailure(error: unknown): {
  readonly charged: boolean;
  readonly permanent: boolean;
} {
  if (!(error instanceof ZkPlanError) || !error.charged)
    return { charged: false, permanent: false };
  return {
    charged: true,
    permanent: !error.retryable || isPermanentError(error.cause) || isPermanentCause(error.cause),
  };
}

/**
 * An error of zk-plan's own that a task function let through and that says no try of it can
 * succeed: a spawn call that asks for other tasks than an earlier run's got (SPAWN_MISMATCH), a
 * hand-over to a task whose input failed for good already (INPUT_FAILED).
 */
function isPermanentCause(cause: unknown): boolean {
  return cause instanceof SpawnMismatchError || cause instanceof InputFailedError;
}

/** A PermanentError, also from another copy of zk-plan (matched by name). */
export function isPermanentError(error: unknown): boolean {
  return (
    error instanceof PermanentError || (error instanceof Error && error.name === 'PermanentError')
  );
}

/** The next step after a charged failure: fail the task for good, or let it be tried again after a wait. */
export function decideAfterFailure(
  failuresSoFar: number,
  permanent: boolean,
  policy: ResolvedRetryPolicy,
  now: number,
): { readonly failTask: boolean; readonly failures: number; readonly notBefore: number } {
  const failures = failuresSoFar + 1;
  if (permanent || failures >= policy.maxAttempts)
    return { failTask: true, failures, notBefore: now };
  return { failTask: false, failures, notBefore: now + retryDelayMs(policy, failures) };
}

/** Builds the record of a failed try from what was thrown (the task's own error is the cause of a TaskExecutionError). */
export function describeFailure(
  error: unknown,
  permanent: boolean,
  attempts: number,
  workerId: string,
  now: Date,
): TaskFailure {
  const wrapper = error instanceof Error ? error : new Error(String(error));
  const original =
    wrapper instanceof ZkPlanError && wrapper.code === 'TASK_FAILED' ? wrapper.cause : undefined;
  const candidate =
    original instanceof Error ? (original as Error & { code?: unknown }).code : undefined;
  const ownCode = typeof candidate === 'string' ? candidate : undefined;
  return {
    type: original instanceof Error ? original.name : wrapper.name,
    message: wrapper.message,
    code: ownCode ?? (wrapper instanceof ZkPlanError ? wrapper.code : 'ERROR'),
    stack: (original instanceof Error ? original.stack : undefined) ?? wrapper.stack,
    retryable: !permanent,
    attempts,
    workerId,
    at: now,
  };
}
