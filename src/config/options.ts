import type { DependencyContainer } from 'tsyringe';
import { InvalidArgumentError } from '../errors/usage-errors.js';
import { DEFAULTS } from './defaults.js';
import { assertDurationMs, assertKnownKeys } from './option-checks.js';
import type { FunctionRegistry } from '../exec/function-registry.js';
import { resolveAcl, resolveAuth, type AclEntry, type ZkAuth } from '../zk/acl.js';
import type { ZkClientOptions } from '../zk/zk-client-types.js';
import {
  resolveTaskLogOptions,
  type ResolvedTaskLogOptions,
  type TaskLogOptions,
} from './task-log-options.js';

/**
 * The spec's back-off attributes for idle worker rounds: `initial × increase^count`, capped at `max`.
 *
 * @category Workers
 */
export interface BackoffOptions {
  /** Sleep after the first idle round, in ms. @defaultValue DEFAULTS.backoff.initial (100) */
  readonly initial?: number;
  /** Factor applied per further idle round. @defaultValue DEFAULTS.backoff.increase (1.5) */
  readonly increase?: number;
  /** Upper bound of one sleep, in ms. @defaultValue DEFAULTS.backoff.max (10 000) */
  readonly max?: number;
}

export type ResolvedBackoff = Required<BackoffOptions>;

/**
 * Options of `ZkPlan.connect`.
 *
 * @category Configuration
 */
export interface ConnectOptions {
  /** ZooKeeper connect string, `host:port[,host:port…][/chroot]`. */
  readonly connect: string;
  /** Functions this process can run, and against which `addTask` checks names. @defaultValue an empty registry (no name check) */
  readonly functions?: FunctionRegistry;
  /** ZooKeeper session timeout: how long a dead worker's tasks stay owned. @defaultValue DEFAULTS.sessionTimeoutMs (10 000) */
  readonly sessionTimeoutMs?: number;
  /** How long `connect` waits for a server before failing. @defaultValue DEFAULTS.connectTimeoutMs (15 000) */
  readonly connectTimeoutMs?: number;
  /** The tsyringe container handed to task functions as `ctx.container`. @defaultValue a child of tsyringe's root container */
  readonly container?: DependencyContainer;
  /**
   * Credentials added to every ZooKeeper session before it is used, the first and each new one
   * after an expiry, e.g. `{ scheme: 'digest', id: 'user:password' }`. Refused credentials make
   * `connect` fail with `ZkAuthError` (code `AUTH_FAILED`). @defaultValue none
   */
  readonly auth?: ZkAuth | readonly ZkAuth[];
  /**
   * ACL of every node this ZkPlan creates (plans, tasks, and the nodes its workers write), e.g.
   * `[digestAcl('user:password')]`. Needs an `auth` that the ACL grants read, create and delete,
   * else `InvalidArgumentError`. The ACL travels in each create request (never a world-open
   * moment); a parent, plan or task found with a wider ACL is refused (`ForeignAclError`). Needs the
   * patched native client that `npm install` builds (else `NativeClientUnpatchedError`). @defaultValue none: the open ACL
   */
  readonly acl?: readonly AclEntry[];
  /**
   * The largest stored value (encoded) this ZkPlan reads back: getResult, snapshots.export and
   * snapshots.rerun, the web view, and addTask on a finished producer's kept result. A chunked value
   * whose header claims more is refused with MalformedNodeError (MALFORMED_NODE) before anything
   * else is read. Also the default `maxResultBytes` of its workers. @defaultValue DEFAULTS.maxResultBytes (16 MiB)
   */
  readonly maxResultBytes?: number;
  /**
   * How often one worker loop of this process scans the plans it follows in full, besides their
   * runnable indexes: the bound on how long a repair waits that no watch announces (a dead
   * builder's committed batch whose tasks were never indexed, a failed task whose plan marker a
   * crash lost). Shorter finds them sooner at the cost of reading every task of every plan
   * followed that often. @defaultValue DEFAULTS.fullScanIntervalMs (10 000)
   */
  readonly fullScanIntervalMs?: number;
  /**
   * The `jute.maxbuffer` of the clients that read the plans: Java clients (zkCli.sh, Curator-based
   * tools) refuse a reply past it, so a plan's child listing must fit: addTask and addTasks refuse
   * tasks that would take it past this (PlanTooLargeError, PLAN_TOO_LARGE); about 49 500 tasks fit
   * under the default. zk-plan's own native client reads larger listings. Raise it together with the
   * servers' and those clients' `-Djute.maxbuffer`. @defaultValue DEFAULTS.juteMaxBufferBytes (1 048 575, ZooKeeper's default)
   */
  readonly juteMaxBufferBytes?: number;
}

/**
 * Options of one worker loop (`zkPlan.worker`) and of a pool (`startWorkers`).
 *
 * @category Workers
 */
export interface WorkerOptions {
  /** Back-off of idle rounds. */
  readonly backoff?: BackoffOptions;
  /** Run tasks holding inline source, in a vm2 sandbox inside a worker thread. Anyone who can write a task could run code: keep off unless trusted. @defaultValue false */
  readonly allowInline?: boolean;
  /** Time limit of a whole run of an inline function (synchronous part, promises, callbacks), in ms; past it its thread is terminated and the try fails. @defaultValue DEFAULTS.inlineTimeoutMs (5 000) */
  readonly inlineTimeoutMs?: number;
  /**
   * Run shell tasks (`call('shell', { command, … })`): commands in a process group of their own,
   * with the worker's rights. Anyone who can write a task could run commands: keep off unless
   * trusted. A worker without it leaves shell tasks to one that has it. @defaultValue false
   */
  readonly allowShell?: boolean;
  /**
   * After SIGTERM to a stopped shell task's process group (its timeoutMs, a pause with abort, a
   * cancel, a drain), how long before SIGKILL to what is left of it, in ms. @defaultValue DEFAULTS.shell.killGraceMs (5 000)
   */
  readonly shellKillGraceMs?: number;
  /** Identifies this worker in `owner` nodes and events. @defaultValue `<hostname>:<pid>:<n>` */
  readonly workerId?: string;
  /**
   * Largest result (encoded) a task may return; stored in chunks above ~900 kB; beyond it the task
   * fails with RESULT_TOO_LARGE. Also the largest input (or stored result) the worker reads: a
   * stored value claiming more fails its task for good with MALFORMED_NODE. @defaultValue the ZkPlan's maxResultBytes (DEFAULTS.maxResultBytes, 16 MiB)
   */
  readonly maxResultBytes?: number;
  /**
   * What is kept of what task functions log (`ctx.log`, and `console.*` while they run): a bounded
   * tail per try in ZooKeeper, the whole log in a sink, each line echoed to the worker's output.
   * `false` keeps nothing (lines are only echoed). @defaultValue see TaskLogOptions
   */
  readonly taskLogs?: TaskLogOptions | false;
}

/**
 * Options of `startWorkers`: those of each worker loop, how many loops share the process's
 * session, how long `stop()` lets running tasks finish, and how long finished plans are kept.
 *
 * @category Workers
 */
export interface WorkerPoolOptions extends WorkerOptions {
  /** Number of worker loops sharing this process's ZooKeeper session. @defaultValue DEFAULTS.workerCount (1) */
  readonly count?: number;
  /** On `stop()`, how long running tasks may finish before they are aborted and released, in ms. @defaultValue DEFAULTS.drainTimeoutMs (30 000) */
  readonly drainTimeoutMs?: number;
  /**
   * How long finished plans (completed, or failed and settled) under the pool's parent are kept,
   * with their kept results and history; `false` keeps them for ever. Applied by one worker
   * process of the cluster at a time. @defaultValue DEFAULTS.retention (`{ maxAgeMs: 7 days, maxCount: 1000, sweepIntervalMs: 60000 }`)
   */
  readonly retention?: RetentionOptions | false;
}

/**
 * Retention of finished plans (see `WorkerPoolOptions.retention`).
 *
 * @category Workers
 */
export interface RetentionOptions {
  /** A finished plan created longer ago than this is deleted, in ms. @defaultValue DEFAULTS.retention.maxAgeMs (604 800 000, 7 days) */
  readonly maxAgeMs?: number;
  /** Beyond this many finished plans under the parent, the oldest are deleted. @defaultValue DEFAULTS.retention.maxCount (1 000) */
  readonly maxCount?: number;
  /** How often a process tries to sweep, in ms. @defaultValue DEFAULTS.retention.sweepIntervalMs (60 000) */
  readonly sweepIntervalMs?: number;
}

export type ResolvedRetention = Required<RetentionOptions>;

export interface ResolvedWorkerOptions {
  readonly backoff: ResolvedBackoff;
  readonly allowInline: boolean;
  readonly inlineTimeoutMs: number;
  readonly allowShell: boolean;
  readonly shellKillGraceMs: number;
  readonly workerId: string;
  readonly maxResultBytes: number;
  readonly taskLogs: ResolvedTaskLogOptions | false;
}

/** The spec's back-off of idle worker rounds (`DEFAULTS.backoff`). */
export const DEFAULT_BACKOFF: ResolvedBackoff = DEFAULTS.backoff;

/** The option names of each options object of the public API: anything else is refused (a misspelling would be ignored silently). */
const BACKOFF_KEYS: Record<keyof BackoffOptions, true> = {
  initial: true,
  increase: true,
  max: true,
};
const CONNECT_KEYS: Record<keyof ConnectOptions, true> = {
  connect: true,
  functions: true,
  sessionTimeoutMs: true,
  connectTimeoutMs: true,
  container: true,
  auth: true,
  acl: true,
  maxResultBytes: true,
  fullScanIntervalMs: true,
  juteMaxBufferBytes: true,
};
const WORKER_KEYS: Record<keyof WorkerOptions, true> = {
  backoff: true,
  allowInline: true,
  inlineTimeoutMs: true,
  allowShell: true,
  shellKillGraceMs: true,
  workerId: true,
  maxResultBytes: true,
  taskLogs: true,
};
const POOL_KEYS: Record<keyof WorkerPoolOptions, true> = {
  ...WORKER_KEYS,
  count: true,
  drainTimeoutMs: true,
  retention: true,
};
const RETENTION_KEYS: Record<keyof RetentionOptions, true> = {
  maxAgeMs: true,
  maxCount: true,
  sweepIntervalMs: true,
};
const WAIT_KEYS: Record<keyof WaitOptions, true> = { timeoutMs: true, signal: true };
const PLAN_EVENT_KEYS: Record<keyof PlanEventOptions, true> = {
  maxAttempts: true,
  retryDelayMs: true,
  onError: true,
};

/** Validates back-off attributes and fills in the spec's defaults. */
export function resolveBackoff(attrs: BackoffOptions = {}): ResolvedBackoff {
  assertObject('backoff', attrs);
  assertKnownKeys('backoff', attrs, BACKOFF_KEYS);
  const resolved = { ...DEFAULT_BACKOFF, ...withoutUndefined(attrs) };
  assertDurationMs('backoff.initial', resolved.initial, { allowZero: true });
  assertPositiveNumber('backoff.increase', resolved.increase);
  if (resolved.increase < 1)
    throw new InvalidArgumentError(
      'backoff.increase',
      `must be at least 1, got ${resolved.increase}`,
    );
  assertDurationMs('backoff.max', resolved.max, { allowZero: true });
  return resolved;
}

/** The smallest `juteMaxBufferBytes` accepted: a plan of a few tasks must still fit. */
const MIN_JUTE_MAX_BUFFER_BYTES = 64 * 1024;

/** Checks a `juteMaxBufferBytes` (of ZkPlan.connect): a whole number of bytes, at least 64 KiB. */
export function resolveJuteMaxBufferBytes(
  juteMaxBufferBytes: unknown = DEFAULTS.juteMaxBufferBytes,
): number {
  if (
    typeof juteMaxBufferBytes !== 'number' ||
    !Number.isSafeInteger(juteMaxBufferBytes) ||
    juteMaxBufferBytes < MIN_JUTE_MAX_BUFFER_BYTES
  ) {
    throw new InvalidArgumentError(
      'juteMaxBufferBytes',
      `expected a whole number of bytes ≥ ${MIN_JUTE_MAX_BUFFER_BYTES} (the ensemble's jute.maxbuffer), got ${String(juteMaxBufferBytes)}`,
    );
  }
  return juteMaxBufferBytes;
}

/** Checks a `maxResultBytes` (of ZkPlan.connect or of workers): a whole number of bytes ≥ 1. */
export function resolveMaxResultBytes(maxResultBytes: unknown = DEFAULTS.maxResultBytes): number {
  if (
    typeof maxResultBytes !== 'number' ||
    !Number.isSafeInteger(maxResultBytes) ||
    maxResultBytes < 1
  ) {
    throw new InvalidArgumentError(
      'maxResultBytes',
      `expected a whole number of bytes ≥ 1, got ${String(maxResultBytes)}`,
    );
  }
  return maxResultBytes;
}

export function resolveConnectOptions(options: ConnectOptions): ZkClientOptions {
  assertObject('options', options);
  assertKnownKeys('ZkPlan.connect', options, CONNECT_KEYS);
  if (typeof options.connect !== 'string' || options.connect.trim() === '') {
    throw new InvalidArgumentError(
      'connect',
      'expected a ZooKeeper connect string such as "127.0.0.1:2181"',
    );
  }
  const sessionTimeoutMs = options.sessionTimeoutMs ?? DEFAULTS.sessionTimeoutMs;
  const connectTimeoutMs = options.connectTimeoutMs ?? DEFAULTS.connectTimeoutMs;
  assertDurationMs('sessionTimeoutMs', sessionTimeoutMs);
  assertDurationMs('connectTimeoutMs', connectTimeoutMs);
  const auth = options.auth === undefined ? [] : resolveAuth(options.auth);
  const acl = options.acl === undefined ? undefined : resolveAcl(options.acl, auth);
  resolveMaxResultBytes(options.maxResultBytes);
  if (options.fullScanIntervalMs !== undefined)
    assertDurationMs('fullScanIntervalMs', options.fullScanIntervalMs);
  resolveJuteMaxBufferBytes(options.juteMaxBufferBytes);
  return {
    connect: options.connect.trim(),
    sessionTimeoutMs,
    connectTimeoutMs,
    ...(auth.length > 0 ? { auth } : {}),
    ...(acl ? { acl } : {}),
  };
}

let workerSerial = 0;

const MAX_VM_TIMEOUT_MS = 2 ** 32 - 1;

/** Options objects that resolvePoolSize checked as pool options: resolveWorkerOptions then lets `count` and `drainTimeoutMs` through. */
const checkedPoolOptions = new WeakSet<object>();

export function resolveWorkerOptions(
  options: WorkerOptions = {},
  defaultIdPrefix: string,
  defaultMaxResultBytes: number = DEFAULTS.maxResultBytes,
): ResolvedWorkerOptions {
  assertObject('worker options', options);
  assertKnownKeys(
    checkedPoolOptions.has(options) ? 'startWorkers' : 'worker',
    options,
    checkedPoolOptions.has(options) ? POOL_KEYS : WORKER_KEYS,
  );
  const inlineTimeoutMs = options.inlineTimeoutMs ?? DEFAULTS.inlineTimeoutMs;
  // The range vm2's own limit once took (32 bits): the one time option not bound by Node's timers (the sandbox's timer re-arms past them).
  assertDurationMs('inlineTimeoutMs', inlineTimeoutMs, { max: MAX_VM_TIMEOUT_MS });
  if (options.allowInline !== undefined && typeof options.allowInline !== 'boolean') {
    throw new InvalidArgumentError(
      'allowInline',
      `expected a boolean, got ${typeof options.allowInline}`,
    );
  }
  if (options.allowShell !== undefined && typeof options.allowShell !== 'boolean') {
    throw new InvalidArgumentError(
      'allowShell',
      `expected a boolean, got ${typeof options.allowShell}`,
    );
  }
  const shellKillGraceMs = options.shellKillGraceMs ?? DEFAULTS.shell.killGraceMs;
  assertDurationMs('shellKillGraceMs', shellKillGraceMs, { allowZero: true });
  if (
    options.workerId !== undefined &&
    (typeof options.workerId !== 'string' || options.workerId === '')
  ) {
    throw new InvalidArgumentError('workerId', 'expected a non-empty string');
  }
  const maxResultBytes = resolveMaxResultBytes(options.maxResultBytes ?? defaultMaxResultBytes);
  return {
    backoff: resolveBackoff(options.backoff),
    allowInline: options.allowInline ?? DEFAULTS.allowInline,
    inlineTimeoutMs,
    allowShell: options.allowShell ?? DEFAULTS.allowShell,
    shellKillGraceMs,
    workerId: options.workerId ?? `${defaultIdPrefix}:${++workerSerial}`,
    maxResultBytes,
    taskLogs: resolveTaskLogOptions(options.taskLogs),
  };
}

export function resolvePoolSize(options: WorkerPoolOptions): {
  count: number;
  drainTimeoutMs: number;
  retention: ResolvedRetention | undefined;
} {
  assertObject('options', options);
  assertKnownKeys('startWorkers', options, POOL_KEYS);
  checkedPoolOptions.add(options);
  const count = options.count ?? DEFAULTS.workerCount;
  if (!Number.isInteger(count) || count < 1)
    throw new InvalidArgumentError('count', `expected a whole number ≥ 1, got ${String(count)}`);
  const drainTimeoutMs = options.drainTimeoutMs ?? DEFAULTS.drainTimeoutMs;
  assertDurationMs('drainTimeoutMs', drainTimeoutMs, { allowZero: true });
  return { count, drainTimeoutMs, retention: resolveRetention(options.retention) };
}

/** Validates the retention of finished plans; undefined when plans are kept for ever. */
export function resolveRetention(
  options: RetentionOptions | false | undefined,
): ResolvedRetention | undefined {
  if (options === false) return undefined;
  const given = options ?? {};
  assertObject('retention', given);
  assertKnownKeys('retention', given, RETENTION_KEYS);
  const resolved = { ...DEFAULTS.retention, ...withoutUndefined(given) };
  assertDurationMs('retention.maxAgeMs', resolved.maxAgeMs, { allowZero: true });
  assertDurationMs('retention.sweepIntervalMs', resolved.sweepIntervalMs);
  if (!Number.isSafeInteger(resolved.maxCount) || resolved.maxCount < 0) {
    throw new InvalidArgumentError(
      'retention.maxCount',
      `expected a whole number ≥ 0, got ${String(resolved.maxCount)}`,
    );
  }
  return resolved;
}

/**
 * Options of `alerts.subscribe`.
 *
 * @category Events and alerts
 */
export interface PlanEventOptions {
  /** Calls of a listener that throws (or rejects) before the event is given up, with doubling pauses. @defaultValue DEFAULTS.planEvents.maxAttempts (5) */
  readonly maxAttempts?: number;
  /** Pause after the first failed call, in ms. @defaultValue DEFAULTS.planEvents.retryDelayMs (1 000) */
  readonly retryDelayMs?: number;
  /** Told of a listener that failed for good (with the event's id), and of ZooKeeper trouble while following. @defaultValue none */
  readonly onError?: (error: Error, eventId?: string) => void;
}

/** Validates alerts.subscribe's options and fills in the defaults. */
export function resolvePlanEventOptions(
  options: PlanEventOptions,
): Required<Pick<PlanEventOptions, 'maxAttempts' | 'retryDelayMs'>> &
  Pick<PlanEventOptions, 'onError'> {
  assertObject('options', options);
  assertKnownKeys('alerts.subscribe', options, PLAN_EVENT_KEYS);
  const maxAttempts = options.maxAttempts ?? DEFAULTS.planEvents.maxAttempts;
  if (!Number.isInteger(maxAttempts) || maxAttempts < 1)
    throw new InvalidArgumentError(
      'maxAttempts',
      `expected a whole number ≥ 1, got ${String(maxAttempts)}`,
    );
  const retryDelayMs = options.retryDelayMs ?? DEFAULTS.planEvents.retryDelayMs;
  assertDurationMs('retryDelayMs', retryDelayMs, { allowZero: true });
  if (options.onError !== undefined && typeof options.onError !== 'function')
    throw new InvalidArgumentError('onError', 'expected a function');
  return { maxAttempts, retryDelayMs, ...(options.onError ? { onError: options.onError } : {}) };
}

/**
 * Options of `startScheduler`.
 *
 * @category Schedules
 */
export interface SchedulerOptions {
  /** How often each schedule is looked at besides its ticks' timers and the watches (this is how a tick whose firer died is finished). @defaultValue DEFAULTS.schedule.pollMs (1 000) */
  readonly pollMs?: number;
}

const SCHEDULER_KEYS: Record<keyof SchedulerOptions, true> = { pollMs: true };

/** Validates startScheduler's options and fills in the defaults. */
export function resolveSchedulerOptions(options: SchedulerOptions): Required<SchedulerOptions> {
  assertObject('options', options);
  assertKnownKeys('startScheduler', options, SCHEDULER_KEYS);
  const pollMs = options.pollMs ?? DEFAULTS.schedule.pollMs;
  assertDurationMs('pollMs', pollMs);
  return { pollMs };
}

/**
 * Options of `waitForCompletion`.
 *
 * @category Plans and tasks
 */
export interface WaitOptions {
  /** Give up (WaitTimeoutError) after this long, in ms. @defaultValue DEFAULTS.waitTimeoutMs (60 000) */
  readonly timeoutMs?: number;
  /** Stop waiting (rejecting with the signal's reason) when it aborts. @defaultValue none */
  readonly signal?: AbortSignal;
}

/** Validates waitForCompletion's options and fills in the default timeout. */
export function resolveWaitOptions(options: WaitOptions = {}): {
  timeoutMs: number;
  signal?: AbortSignal;
} {
  assertObject('options', options);
  assertKnownKeys('waitForCompletion', options, WAIT_KEYS);
  const timeoutMs = options.timeoutMs ?? DEFAULTS.waitTimeoutMs;
  assertDurationMs('timeoutMs', timeoutMs);
  if (options.signal !== undefined && !(options.signal instanceof AbortSignal))
    throw new InvalidArgumentError('signal', 'expected an AbortSignal');
  return { timeoutMs, ...(options.signal !== undefined ? { signal: options.signal } : {}) };
}

export function assertPositiveNumber(
  argument: string,
  value: unknown,
  { allowZero = false } = {},
): asserts value is number {
  if (
    typeof value !== 'number' ||
    !Number.isFinite(value) ||
    value < 0 ||
    (!allowZero && value === 0)
  ) {
    throw new InvalidArgumentError(
      argument,
      `expected a finite number ${allowZero ? '≥ 0' : '> 0'}, got ${String(value)}`,
    );
  }
}

function assertObject(argument: string, value: unknown): void {
  if (typeof value !== 'object' || value === null)
    throw new InvalidArgumentError(
      argument,
      `expected an object, got ${value === null ? 'null' : typeof value}`,
    );
}

function withoutUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(
    Object.entries(value).filter(([, entry]) => entry !== undefined),
  ) as Partial<T>;
}
