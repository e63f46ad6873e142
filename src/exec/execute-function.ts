import { ShellDisabledError } from '../errors/shell-errors.js';
import {
  InlineDisabledError,
  TaskExecutionError,
  UnknownFunctionError,
  UnserializableValueError,
} from '../errors/task-errors.js';
import { ResultTooLargeError } from '../errors/value-errors.js';
import { runShell } from '../shell/run-shell.js';
import { SHELL_FUNCTION } from '../shell/shell-params.js';
import { COLLECT_FUNCTION } from '../spawn/collect-function.js';
import { NotYet } from './not-yet.js';
import type { DependencyLookup } from '../dependent/dependency-lookup.js';
import { WAIT_FOR_PLAN_FUNCTION } from '../dependent/dependency-target.js';
import { waitForPlanCheck } from '../dependent/wait-for-plan.js';
import type { SubPlanRunner } from '../subplan/sub-plan-runner.js';
import { SUB_PLAN_FUNCTION } from '../subplan/sub-plan-target.js';
import type { ZkSession } from '../zk/zk-client-types.js';
import { RESULT, childPath } from '../zk/layout.js';
import type { FunctionRegistry } from './function-registry.js';
import { runInline } from './inline-sandbox.js';
import type { TaskContext } from './task-context.js';
import type { TaskDefinition } from './task-spec.js';
import { checkCall, checkResult } from './typed-call.js';

export interface ExecutionSettings {
  readonly functions: FunctionRegistry;
  readonly allowInline: boolean;
  readonly inlineTimeoutMs: number;
  /** Runs the built-in `shell` function (src/shell); without it a shell task fails with SHELL_DISABLED. */
  readonly allowShell: boolean;
  /** After SIGTERM, how long a stopped shell command's process group has before SIGKILL. */
  readonly shellKillGraceMs: number;
  /** Largest encoded result stored (in chunks); beyond it the try fails with RESULT_TOO_LARGE. */
  readonly maxResultBytes: number;
  /** The reads of the built-in `zk-plan:wait-for-plan` (dependent tasks); without it such a task fails. */
  readonly dependencies?: DependencyLookup;
  /** The checks of the built-in `zk-plan:sub-plan` (sub-plan tasks); without it such a task fails. */
  readonly subPlans?: SubPlanRunner;
}

/**
 * Runs a task's function with its arguments and returns its result. Whatever the function
 * throws (an Error or not) comes back as a TaskExecutionError naming the task; an unknown
 * function or a disabled inline or shell task fails with its own typed error, and a param, input or
 * result that does not match the function's schemas with a SchemaMismatchError. The built-in
 * `shell` fails with its own errors too (ShellExitError…), not wrapped.
 */
export async function executeFunction(
  definition: TaskDefinition,
  ctx: Omit<TaskContext<unknown[]>, 'params'>,
  args: readonly unknown[],
  settings: ExecutionSettings,
  /** The session of the task's claim: a sub-plan task's writes are fenced by it. */
  claimSession?: ZkSession,
): Promise<unknown> {
  if ('fn' in definition && definition.fn === SHELL_FUNCTION) {
    if (!settings.allowShell) throw new ShellDisabledError(ctx.task);
    return await runShell(ctx, definition.params, { killGraceMs: settings.shellKillGraceMs });
  }
  // The built-in reduce of a map without one: its inputs, the mapped results, as a list.
  if ('fn' in definition && definition.fn === COLLECT_FUNCTION) return [...args];
  // The built-in check of a dependent task: complete, "not yet", or fail for good (src/dependent).
  if ('fn' in definition && definition.fn === WAIT_FOR_PLAN_FUNCTION) {
    if (settings.dependencies === undefined)
      throw new UnknownFunctionError(definition.fn, ctx.task, settings.functions.names());
    return await waitForPlanCheck(ctx, definition.params, settings.dependencies);
  }
  // The built-in check of a sub-plan task: make its child plan, wait for it, take its result (src/subplan).
  if ('fn' in definition && definition.fn === SUB_PLAN_FUNCTION) {
    if (settings.subPlans === undefined || claimSession === undefined)
      throw new UnknownFunctionError(definition.fn, ctx.task, settings.functions.names());
    return await settings.subPlans.check(ctx, claimSession, definition.params, args);
  }
  if ('fn' in definition) {
    const fn = settings.functions.get(definition.fn);
    if (fn === undefined)
      throw new UnknownFunctionError(definition.fn, ctx.task, settings.functions.names());
    const invoke = fn as (context: TaskContext<readonly unknown[]>, ...rest: unknown[]) => unknown;
    const schemas = settings.functions.schemasOf(definition.fn);
    if (schemas === undefined)
      return await guard(ctx.task, () =>
        invoke({ ...ctx, params: [...definition.params] }, ...args),
      );
    const checked = await checkCall(
      ctx.task,
      definition.fn,
      schemas,
      definition.params,
      args,
      ctx.signal,
    );
    const value = await guard(ctx.task, () =>
      invoke({ ...ctx, params: checked.params }, ...checked.inputs),
    );
    // A "not yet" is no result: the worker acts on it, and the function's result schema does not apply.
    if (value instanceof NotYet) return value;
    return await checkResult(ctx.task, definition.fn, schemas, value, ctx.signal);
  }
  if (!settings.allowInline) throw new InlineDisabledError(ctx.task);
  return await executeInline(definition.source, ctx, args, settings);
}

/**
 * Runs inline source in its thread (inline-sandbox.ts) and turns how it ended into the errors a
 * registered function's run gives: what it threw, and running past `inlineTimeoutMs`, as
 * TaskExecutionError; an unstorable or oversized result as UnserializableValueError or
 * ResultTooLargeError (checked in the thread, so an oversized result never crosses). An aborted
 * signal (the task's timeout, a stop past its drain, a lost session) terminates the thread and
 * rejects with the signal's reason.
 */
async function executeInline(
  source: string,
  ctx: Omit<TaskContext<unknown[]>, 'params'>,
  args: readonly unknown[],
  settings: ExecutionSettings,
): Promise<unknown> {
  const { task } = ctx;
  const outcome = await runInline({
    source,
    ctx: { task, plan: ctx.plan, workerId: ctx.workerId },
    args,
    timeoutMs: settings.inlineTimeoutMs,
    maxResultBytes: settings.maxResultBytes,
    signal: ctx.signal,
  });
  switch (outcome.kind) {
    case 'returned':
      return outcome.value;
    case 'threw':
      throw new TaskExecutionError(task, describeThrown(outcome.thrown), outcome.thrown);
    case 'timed-out': {
      const message = `the inline function timed out after ${settings.inlineTimeoutMs} ms (inlineTimeoutMs); its thread was stopped`;
      throw new TaskExecutionError(task, message, new Error(message));
    }
    case 'thread-died':
      throw new TaskExecutionError(
        task,
        `the inline function's thread ended under it: ${outcome.detail}`,
        new Error(outcome.detail),
      );
    case 'unserializable':
      throw new UnserializableValueError(`The result of task ${task}`, outcome.problem, task);
    case 'too-large':
      throw new ResultTooLargeError(
        outcome.bytes,
        settings.maxResultBytes,
        childPath(task, RESULT),
      );
  }
}

async function guard(task: string, run: () => unknown): Promise<unknown> {
  try {
    return await run();
  } catch (thrown) {
    throw new TaskExecutionError(task, describeThrown(thrown), thrown);
  }
}

function describeThrown(thrown: unknown): string {
  if (thrown instanceof Error) return thrown.message;
  if (
    typeof thrown === 'object' &&
    thrown !== null &&
    'message' in thrown &&
    typeof thrown.message === 'string'
  )
    return thrown.message;
  try {
    return `threw a non-Error value: ${JSON.stringify(thrown) ?? String(thrown)}`;
  } catch {
    return `threw a non-Error value: ${String(thrown)}`;
  }
}
