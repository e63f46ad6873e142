/**
 * Marker that makes `instanceof ZkPlanError` hold across realms (vm2 sandboxes) and across
 * duplicate copies of this package, where a plain prototype check would fail.
 */
const ZK_PLAN_ERROR_MARKER = Symbol.for('zk-plan.error');

/**
 * Fields every zk-plan error may carry, so callers can branch on them without parsing messages.
 *
 * @category Errors
 */
export interface ZkPlanErrorDetails {
  /** The znode the failure is about, when there is one. */
  readonly path?: string;
  /** The underlying error. */
  readonly cause?: unknown;
  /** The message as the `zk-plan` command says it, when `message` names API calls that have a command of their own. */
  readonly cliMessage?: string;
}

/**
 * Base class of every error zk-plan throws; branch on the stable `code`, never on the message.
 *
 * @category Errors
 */
export abstract class ZkPlanError extends Error {
  /** The stable code of the error (PLAN_NOT_FOUND, CONNECTION_LOSS, …): what to branch on. */
  abstract readonly code: string;
  /** The znode the failure is about, when there is one. */
  readonly path: string | undefined;
  /** A task whose try fails with this error uses up one of its attempts (false: an infrastructure fault, a stop, a lost claim). */
  readonly charged: boolean = false;
  /** Trying the task again may give another outcome (false: the task can never succeed as it is). */
  readonly retryable: boolean = true;
  /**
   * The message in the words of the `zk-plan` command: `zk-plan retry <plan>` where `message` says
   * `retryFailed(plan)`. The same as `message` for an error whose message names no API call.
   */
  declare readonly cliMessage: string;

  constructor(message: string, details: ZkPlanErrorDetails = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.path = details.path;
    Object.defineProperty(this, ZK_PLAN_ERROR_MARKER, { value: true });
    // Not enumerable: an error compared or logged field by field shows its message once.
    Object.defineProperty(this, 'cliMessage', {
      value: details.cliMessage ?? message,
      enumerable: false,
    });
  }

  /**
   * `error instanceof ZkPlanError` holds for zk-plan's errors from another realm (a vm2 sandbox) or
   * another copy of the package too; `instanceof` a subclass checks the prototype chain as usual.
   */
  static override [Symbol.hasInstance](instance: unknown): boolean {
    if (typeof instance !== 'object' || instance === null) return false;
    // For subclasses, fall back to the prototype chain so `x instanceof ZkError` stays specific.
    if (this !== ZkPlanError) return Function.prototype[Symbol.hasInstance].call(this, instance);
    return ZK_PLAN_ERROR_MARKER in instance;
  }
}

/** Sets `name` on the prototype, so stack traces and logs show the concrete class. */
export function named<T extends abstract new (...args: never[]) => Error>(
  ctor: T,
  name: string,
): T {
  Object.defineProperty(ctor.prototype, 'name', {
    value: name,
    enumerable: false,
    configurable: true,
  });
  return ctor;
}
