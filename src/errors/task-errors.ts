import { ZkPlanError, named } from './base-error.js';

/**
 * Raised on a worker when a task names a function its registry does not have; the task is released for another worker.
 *
 * @category Errors
 */
export class UnknownFunctionError extends ZkPlanError {
  readonly code = 'UNKNOWN_FUNCTION';
  override readonly charged = true;
  constructor(
    readonly functionName: string,
    task: string | undefined,
    known: readonly string[],
  ) {
    super(
      `Function '${functionName}'${task ? ` used by task ${task}` : ''} is not registered` +
        ` (registered: ${known.length > 0 ? known.join(', ') : 'none'}): every worker of the plan's parent must register it (export it from the --functions module of zk-plan worker, or register it on the worker's FunctionRegistry)`,
      { path: task },
    );
  }
}
named(UnknownFunctionError, 'UnknownFunctionError');

/**
 * Raised on a worker when a task holds inline code but the worker was not started with `allowInline: true`.
 *
 * @category Errors
 */
export class InlineDisabledError extends ZkPlanError {
  readonly code = 'INLINE_DISABLED';
  override readonly charged = true;
  constructor(task: string) {
    super(
      `Task ${task} holds an inline function, but this worker does not run inline functions: allow them (zk-plan worker --allow-inline, or the worker option allowInline: true) only if everyone who can write tasks may run code on them`,
      { path: task },
    );
  }
}
named(InlineDisabledError, 'InlineDisabledError');

/**
 * Raised when a znode's value is not what zk-plan expects (not superjson, or missing required fields).
 *
 * @category Errors
 */
export class MalformedNodeError extends ZkPlanError {
  readonly code = 'MALFORMED_NODE';
  override readonly charged = true;
  override readonly retryable = false;
  /** `cliProblem`: the problem in the words of the `zk-plan` command, when `problem` names API calls. */
  constructor(path: string, problem: string, cause?: unknown, cliProblem?: string) {
    super(`Znode ${path} is malformed: ${problem}`, {
      path,
      cause,
      ...(cliProblem === undefined
        ? {}
        : { cliMessage: `Znode ${path} is malformed: ${cliProblem}` }),
    });
  }
}
named(MalformedNodeError, 'MalformedNodeError');

/**
 * Raised when a value cannot be stored as superjson (a function, a symbol, a class instance…).
 *
 * @category Errors
 */
export class UnserializableValueError extends ZkPlanError {
  readonly code = 'UNSERIALIZABLE_VALUE';
  override readonly charged = true;
  override readonly retryable = false;
  constructor(
    readonly where: string,
    /** What is wrong and where it sits, e.g. `params[1].client is an instance of Pool, which would lose its class`. */
    readonly problem: string,
    path?: string,
  ) {
    super(
      `${where} cannot be stored: ${problem}. Use plain data (objects, arrays, strings, numbers, bigint, Date, Map, Set, RegExp, URL, Error)`,
      {
        path,
      },
    );
  }
}
named(UnserializableValueError, 'UnserializableValueError');

/**
 * Raised when an encoded value (a result, params, an input) is larger than one znode can hold.
 *
 * @category Errors
 */
export class ValueTooLargeError extends ZkPlanError {
  readonly code = 'VALUE_TOO_LARGE';
  override readonly charged = true;
  override readonly retryable = false;
  constructor(
    readonly where: string,
    readonly bytes: number,
    readonly limitBytes: number,
    path?: string,
  ) {
    super(
      `${where} is ${bytes} bytes once encoded, more than the ${limitBytes} bytes a znode holds (ZooKeeper's jute.maxbuffer): store large data elsewhere and pass a reference`,
      { path },
    );
  }
}
named(ValueTooLargeError, 'ValueTooLargeError');

/**
 * Wraps what a task's function threw (or its timeout), with the task path; the worker releases the task.
 *
 * @category Errors
 */
export class TaskExecutionError extends ZkPlanError {
  readonly code = 'TASK_FAILED';
  override readonly charged = true;
  constructor(
    task: string,
    /** What the function threw, said without the task (the worker's log lines name the task apart). */
    readonly detail: string,
    cause: unknown,
  ) {
    super(`Task ${task} failed: ${detail}`, { path: task, cause });
  }
}
named(TaskExecutionError, 'TaskExecutionError');

/**
 * Raised when a worker finds that its ownership of a task is gone (session expired), so it must not write.
 *
 * @category Errors
 */
export class OwnershipLostError extends ZkPlanError {
  readonly code = 'OWNERSHIP_LOST';
  constructor(task: string, detail: string) {
    super(
      `Lost ownership of task ${task}: ${detail}; its results are dropped and another worker will run it`,
      { path: task },
    );
  }
}
named(OwnershipLostError, 'OwnershipLostError');

/**
 * The signal reason of the tasks a stopping worker still runs when its drain timeout has passed:
 * each is given back, uncharged, for another worker (the worker's log says `released on drain`).
 *
 * @category Errors
 */
export class DrainTimeoutError extends ZkPlanError {
  readonly code = 'DRAIN_TIMEOUT';
  constructor(readonly drainTimeoutMs: number) {
    super(
      `The worker is stopping and its drain timeout (${drainTimeoutMs} ms) has passed: its running tasks are given back, uncharged, for another worker`,
    );
  }
}
named(DrainTimeoutError, 'DrainTimeoutError');

/**
 * Thrown by a task function to say that trying again cannot help (bad input, a missing record):
 * the task fails at once, without using its remaining attempts. Like BullMQ's UnrecoverableError.
 *
 * @category Errors
 */
export class PermanentError extends Error {
  readonly code: string;
  constructor(message: string, options: { code?: string; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = options.code ?? 'PERMANENT';
  }
}
named(PermanentError, 'PermanentError');

/**
 * Raised when a task's function did not settle within the task's `timeoutMs`; its signal is aborted.
 *
 * @category Errors
 */
export class TaskTimeoutError extends ZkPlanError {
  readonly code = 'TASK_TIMEOUT';
  override readonly charged = true;
  constructor(
    task: string,
    readonly timeoutMs: number,
  ) {
    super(
      `Task ${task} did not finish within ${timeoutMs} ms: its signal was aborted; raise the task's timeoutMs option if it needs longer`,
      { path: task },
    );
  }
}
named(TaskTimeoutError, 'TaskTimeoutError');

/**
 * Raised when a task's param, input or result does not match the schema its function was
 * registered with: before the function runs (params, inputs) or before the result is stored.
 * Permanent: the same values would fail again.
 *
 * @category Errors
 */
export class SchemaMismatchError extends ZkPlanError {
  readonly code = 'SCHEMA_MISMATCH';
  override readonly charged = true;
  override readonly retryable = false;
  constructor(
    task: string,
    readonly functionName: string,
    /** `param 1`, `input 2`, `result`, or `inputs` / `params` for a wrong count. */
    readonly edge: string,
    problem: string,
  ) {
    const verb = edge === 'params' || edge === 'inputs' ? 'do' : 'does';
    super(
      `Task ${task} (function '${functionName}'): its ${edge} ${verb} not match the schema '${functionName}' was registered with: ${problem}`,
      {
        path: task,
      },
    );
  }
}
named(SchemaMismatchError, 'SchemaMismatchError');
