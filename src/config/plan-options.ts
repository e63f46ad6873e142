import { InvalidArgumentError } from '../errors/usage-errors.js';
import { DEFAULTS } from './defaults.js';
import { assertDurationMs, assertKnownKeys } from './option-checks.js';
import { assertPlanName, planNameProblem } from '../plan/names.js';
import { traceContextFrom, type StoredTraceContext } from '../tracing/trace-context.js';

/**
 * What a plan does when one of its tasks fails for good.
 *
 * @category Plans and tasks
 */
export type FailurePolicy =
  /** Independent branches run to the end; then the plan ends failed. */
  | 'continue'
  /** Nothing new starts; running tasks have their AbortSignal aborted. */
  | 'failFast';

/**
 * How often a task is tried, and how long workers wait between tries.
 *
 * @category Plans and tasks
 */
export interface RetryPolicy {
  /** Tries in all, the first included; a failure of the last one fails the task. @defaultValue DEFAULTS.plan.retry.maxAttempts (3) */
  readonly maxAttempts?: number;
  /** Wait before the second try, in ms. @defaultValue DEFAULTS.plan.retry.initialDelayMs (1 000) */
  readonly initialDelayMs?: number;
  /** Factor applied to the wait for each further try. @defaultValue DEFAULTS.plan.retry.multiplier (2) */
  readonly multiplier?: number;
  /** Upper bound of one wait, in ms. @defaultValue DEFAULTS.plan.retry.maxDelayMs (60 000) */
  readonly maxDelayMs?: number;
}

export type ResolvedRetryPolicy = Required<RetryPolicy>;

/**
 * Options of `createPlan`; stored in the plan node, so every worker applies them.
 *
 * @category Plans and tasks
 */
export interface PlanOptions extends RetryPolicy {
  /** @defaultValue DEFAULTS.plan.failurePolicy ('continue') */
  readonly failurePolicy?: FailurePolicy;
  /**
   * Keep a record of each task once its node is gone (`<plan>/history`): done, and in a cancelled
   * plan cancelled, unstarted or failed; read by `zk-plan show`, `wait`, `plans`, the web view and
   * `plans.status` (done/total). One more write per task, and its record stays in ZooKeeper as long
   * as the plan (see docs/performance.md). `false` keeps none. @defaultValue DEFAULTS.plan.history (true)
   */
  readonly history?: boolean;
  /**
   * Among the tasks a worker process can take, those of higher priority go first, across plans
   * (an integer; a task's own `priority` overrides its plan's). @defaultValue DEFAULTS.plan.priority (0)
   */
  readonly priority?: number;
  /**
   * A name for people, shown by `zk-plan plans` and `show`, the web view, alerts and worker logs
   * beside the plan's path (at most 200 characters, no control characters; names need not be
   * unique). A spec's `name` and a schedule's name give their plans one. @defaultValue none
   */
  readonly name?: string;
}

/** A plan's settings as stored in its node (plans written by other tools have none: defaults apply). */
export interface PlanSettings {
  readonly failurePolicy: FailurePolicy;
  readonly retry: ResolvedRetryPolicy;
  readonly history: boolean;
  readonly priority: number;
  /** Some task of the plan has a priority of its own (workers then read each task's before picking). */
  readonly taskPriorities: boolean;
  /** The plan's name (`createPlan(parent, { name })`), when it has one. */
  readonly name?: string;
  /** For a sub-plan task's child plan: the task, as the plan node names it (checked against the plan's path by whoever shows it). */
  readonly parentTask?: string;
  /** The trace context of the span that created the plan (with `@opentelemetry/api` present), checked as read: its attempts' spans are its children. */
  readonly trace?: StoredTraceContext;
}

/**
 * The retry policy of a plan created without one, and of its tasks: how many tries a task gets and
 * how long workers wait between them (the `plan.retry` part of DEFAULTS).
 *
 * @category Plans and tasks
 */
export const DEFAULT_RETRY_POLICY: Required<RetryPolicy> = DEFAULTS.plan.retry;

export const DEFAULT_PLAN_SETTINGS: PlanSettings = { ...DEFAULTS.plan, taskPriorities: false };

/**
 * The settings of a plan node that holds none zk-plan can read (written by another tool): the
 * defaults, but no history, which only a plan made by createPlan has a `history` node for.
 */
export const FOREIGN_PLAN_SETTINGS: PlanSettings = { ...DEFAULT_PLAN_SETTINGS, history: false };

const FAILURE_POLICIES: readonly FailurePolicy[] = ['continue', 'failFast'];

const RETRY_KEYS: Record<keyof RetryPolicy, true> = {
  maxAttempts: true,
  initialDelayMs: true,
  multiplier: true,
  maxDelayMs: true,
};
const PLAN_KEYS: Record<keyof PlanOptions, true> = {
  ...RETRY_KEYS,
  failurePolicy: true,
  history: true,
  priority: true,
  name: true,
};

/** The options of `addTask` (and of an `addTasks` entry's `options`): `AddTaskOptions` in src/plan/plan-writer.ts. */
export const ADD_TASK_OPTION_KEYS: Readonly<
  Record<
    | keyof RetryPolicy
    | 'keepResult'
    | 'timeoutMs'
    | 'priority'
    | 'concurrencyKey'
    | 'key'
    | 'map'
    | 'reduce'
    | 'trigger',
    true
  >
> = {
  ...RETRY_KEYS,
  keepResult: true,
  timeoutMs: true,
  priority: true,
  concurrencyKey: true,
  key: true,
  map: true,
  reduce: true,
  trigger: true,
};
/** The fields of an `addTasks` entry (`TaskToAdd`). */
export const TASK_TO_ADD_KEYS: Readonly<Record<'task' | 'args' | 'options', true>> = {
  task: true,
  args: true,
  options: true,
};

/** Validates createPlan options and fills in defaults; `where` names what holds them in a message about an unknown one. */
export function resolvePlanSettings(options: PlanOptions = {}, where = 'createPlan'): PlanSettings {
  if (typeof options !== 'object' || options === null)
    throw new InvalidArgumentError('plan options', 'expected an object');
  assertKnownKeys(where, options, PLAN_KEYS);
  const failurePolicy = options.failurePolicy ?? DEFAULT_PLAN_SETTINGS.failurePolicy;
  if (!FAILURE_POLICIES.includes(failurePolicy)) {
    throw new InvalidArgumentError(
      'failurePolicy',
      `expected one of ${FAILURE_POLICIES.join(', ')}, got ${JSON.stringify(failurePolicy)}`,
    );
  }
  const history = options.history ?? DEFAULT_PLAN_SETTINGS.history;
  if (typeof history !== 'boolean')
    throw new InvalidArgumentError('history', `expected a boolean, got ${typeof history}`);
  const priority = options.priority ?? DEFAULT_PLAN_SETTINGS.priority;
  assertPriority('priority', priority);
  if (options.name !== undefined) assertPlanName('name', options.name);
  return {
    failurePolicy,
    retry: resolveRetryPolicy(options, DEFAULT_RETRY_POLICY),
    history,
    priority,
    taskPriorities: false,
    ...(options.name !== undefined ? { name: options.name } : {}),
  };
}

/** A priority is a whole number (negative ones go after the default 0). */
export function assertPriority(argument: string, value: unknown): asserts value is number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value)) {
    throw new InvalidArgumentError(
      argument,
      `expected a whole number (higher runs first, default 0), got ${typeof value === 'number' ? String(value) : typeof value}`,
    );
  }
}

/** Validates a retry policy (plan-wide or per task) over `base`. */
export function resolveRetryPolicy(
  policy: RetryPolicy,
  base: ResolvedRetryPolicy,
): ResolvedRetryPolicy {
  const resolved = {
    maxAttempts: policy.maxAttempts ?? base.maxAttempts,
    initialDelayMs: policy.initialDelayMs ?? base.initialDelayMs,
    multiplier: policy.multiplier ?? base.multiplier,
    maxDelayMs: policy.maxDelayMs ?? base.maxDelayMs,
  };
  if (!Number.isInteger(resolved.maxAttempts) || resolved.maxAttempts < 1) {
    throw new InvalidArgumentError(
      'maxAttempts',
      `expected a whole number ≥ 1, got ${String(resolved.maxAttempts)}`,
    );
  }
  assertDurationMs('initialDelayMs', resolved.initialDelayMs, { allowZero: true });
  assertDurationMs('maxDelayMs', resolved.maxDelayMs, { allowZero: true });
  if (
    typeof resolved.multiplier !== 'number' ||
    !Number.isFinite(resolved.multiplier) ||
    resolved.multiplier < 1
  ) {
    throw new InvalidArgumentError(
      'multiplier',
      `expected a number ≥ 1, got ${String(resolved.multiplier)}`,
    );
  }
  return resolved;
}

/**
 * Reads settings stored in a plan node; anything missing or unreadable falls back to the defaults,
 * but history only when the node says so (`history: true`, which createPlan always writes out).
 */
export function planSettingsFrom(stored: unknown): PlanSettings {
  if (typeof stored !== 'object' || stored === null) return FOREIGN_PLAN_SETTINGS;
  const record = stored as {
    failurePolicy?: unknown;
    retry?: unknown;
    history?: unknown;
    priority?: unknown;
    taskPriorities?: unknown;
    name?: unknown;
    origin?: { parentTask?: unknown } | null;
    trace?: unknown;
  };
  try {
    const settings = resolvePlanSettings({
      // A name that is not one (another tool's value, or a forged one) is left out: the plan keeps its other settings.
      ...(planNameProblem(record.name) === undefined ? { name: record.name as string } : {}),
      failurePolicy: record.failurePolicy as FailurePolicy | undefined,
      history: record.history === true,
      ...(Number.isSafeInteger(record.priority) ? { priority: record.priority as number } : {}),
      ...(typeof record.retry === 'object' && record.retry !== null
        ? knownRetryFields(record.retry as Record<string, unknown>)
        : {}),
    });
    const parentTask = typeof record.origin === 'object' ? record.origin?.parentTask : undefined;
    // Anyone may write it: a value that is not a valid trace context is left out, the plan runs untraced by it.
    const trace = traceContextFrom(record.trace);
    return {
      ...settings,
      taskPriorities: record.taskPriorities === true,
      ...(typeof parentTask === 'string' && parentTask.length <= 4_096 ? { parentTask } : {}),
      ...(trace === undefined ? {} : { trace }),
    };
  } catch {
    return FOREIGN_PLAN_SETTINGS;
  }
}

/** The retry fields of a stored policy (another tool may have stored more). */
function knownRetryFields(stored: Record<string, unknown>): RetryPolicy {
  return Object.fromEntries(
    Object.entries(stored).filter(([key]) => Object.hasOwn(RETRY_KEYS, key)),
  ) as RetryPolicy;
}

/** Wait before try number `attempt + 1`, after `attempt` failed tries (attempt ≥ 1). */
export function retryDelayMs(policy: ResolvedRetryPolicy, failedAttempts: number): number {
  return Math.min(
    policy.initialDelayMs * policy.multiplier ** Math.max(0, failedAttempts - 1),
    policy.maxDelayMs,
  );
}
