import { hostname } from 'node:os';
import { Writable } from 'node:stream';
import { pino, type DestinationStream, type Level, type Logger, type LoggerOptions } from 'pino';
import pinoPretty from 'pino-pretty';
import type { ZkPlan } from '../zk-plan.js';
import type { ZkPlanEvents } from '../worker/worker-events.js';
import type { SessionState, ZkSession } from '../zk/zk-client-types.js';
import type { ZkAuthError } from '../errors/zk-auth-error.js';
import type { ObservedZkPlan } from './observed.js';
import { escapeJsonControls, printableDeep } from '../util/printable.js';
import {
  describeJobItemStart,
  describeJobItemStop,
  describeJobLog,
  describeJobRunEnd,
  describeMisfire,
  describeRebalance,
  isLostItem,
} from './job-log-lines.js';
import {
  describeTaskClaimed,
  describeTaskCompleted,
  describeTaskContinued,
  describeTaskWaiting,
  describeTaskFailed,
  describeTaskStarted,
  showsStack,
  taskFailure,
  taskFailureLevel,
  userStack,
  type TaskLineFields,
} from './task-log-lines.js';
import { DEFAULTS } from '../config/defaults.js';

export type { Logger } from 'pino';

/** Options of createLogger: level, layout (pretty or JSON lines), destination. */
export interface CreateLoggerOptions {
  /** pino level: trace, debug, info, warn, error, fatal, silent. @defaultValue DEFAULTS.logLevel ('info') */
  readonly level?: string;
  /** Human-readable lines (pino-pretty) instead of JSON lines. @defaultValue process.stdout.isTTY */
  readonly pretty?: boolean;
  /**
   * Where the lines go. @defaultValue standard output. Any pino destination stream (a Writable,
   * `pino.destination(…)`); with `pretty`, pino-pretty then runs in this thread and writes to it.
   */
  readonly destination?: DestinationStream;
  /** Fields added to every line (e.g. `{ service: 'etl-worker' }`). */
  readonly base?: Record<string, unknown>;
}

/**
 * A pino logger: JSON lines (pino's format: `level` as a number, `time` in ms since the epoch,
 * `pid`, `hostname`, `msg`), or pretty lines through the pino-pretty transport (a worker thread)
 * when `pretty`. Safe on a terminal whatever the logged values hold: JSON lines have DEL and the
 * C1 controls escaped too (`\u009b`, which JSON.stringify leaves as they are), pretty lines lose
 * every control character and escape sequence (src/util/printable.ts).
 */
export function createLogger(options: CreateLoggerOptions = {}): Logger {
  const level = options.level ?? DEFAULTS.logLevel;
  if (level !== 'silent' && !(level in pino.levels.values)) {
    throw new RangeError(
      `level: expected one of ${Object.keys(pino.levels.values).join(', ')} or silent, got '${level}'`,
    );
  }
  const pretty = options.pretty ?? process.stdout.isTTY === true;
  const settings: LoggerOptions = {
    level,
    ...(options.base ? { base: { pid: process.pid, hostname: hostname(), ...options.base } } : {}),
    hooks: { streamWrite: pretty ? printableLine : escapeJsonControls },
  };
  if (!pretty) return options.destination ? pino(settings, options.destination) : pino(settings);
  const prettyOptions = { translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' };
  if (options.destination) {
    // A stream cannot be handed to a transport's worker thread: pino-pretty runs in this thread then.
    return pino(
      settings,
      pinoPretty({
        ...prettyOptions,
        colorize: false,
        destination: asWritable(options.destination),
      }),
    );
  }
  return pino({
    ...settings,
    transport: {
      target: 'pino-pretty',
      options: { ...prettyOptions, destination: 1, colorize: process.stdout.isTTY === true },
    },
  });
}

/**
 * A JSON line made printable before pino-pretty lays it out: logged values come from ZooKeeper
 * (failure messages, worker ids…), where a forged one could hold terminal escape sequences. Every
 * string loses its control characters and escape sequences (src/util/printable.ts); the message,
 * printed at the end of the line's header, is also made one line, so that it cannot start a
 * line that looks like another entry. Other values keep their line breaks: pino-pretty prints
 * them quoted (JSON), except a stack, which it lays out on several lines on purpose.
 * (pino-pretty ≥ 13.2 removes control characters itself but leaves the rest of a sequence, `[2J`.)
 * JSON lines need no such pass: see escapeJsonControls.
 */
function printableLine(line: string): string {
  try {
    return `${JSON.stringify(printableDeep(JSON.parse(line), (key) => key !== 'msg'))}\n`;
  } catch {
    return escapeJsonControls(line); // not one JSON document: leave it to pino-pretty
  }
}

/** pino-pretty pipes into its destination: a bare `{ write }` object becomes a Writable. */
function asWritable(destination: DestinationStream): DestinationStream | NodeJS.WritableStream {
  if (typeof (destination as { on?: unknown }).on === 'function') return destination;
  return new Writable({
    write(chunk: Buffer | string, _encoding, callback) {
      destination.write(chunk.toString());
      callback();
    },
  });
}

/** The `error` field of a log line: what is needed to tell one failure from another. */
export interface LoggedError {
  readonly type: string;
  readonly message: string;
  readonly code?: string;
  readonly path?: string;
  readonly stack?: string;
  readonly cause?: LoggedError | string;
}

/** An Error (or anything thrown) as a plain object for a log line; causes are followed a few levels deep. */
export function serializeError(error: unknown, depth = 0): LoggedError | string {
  if (!(error instanceof Error)) return String(error);
  const { code, path } = error as { code?: unknown; path?: unknown };
  const cause = (error as { cause?: unknown }).cause;
  return {
    type: error.name,
    message: error.message,
    ...(typeof code === 'string' || typeof code === 'number' ? { code: String(code) } : {}),
    ...(typeof path === 'string' ? { path } : {}),
    ...(error.stack === undefined ? {} : { stack: error.stack }),
    ...(cause === undefined || depth >= 3 ? {} : { cause: serializeError(cause, depth + 1) }),
  };
}

/**
 * A failed try's `error` field: what the function threw (not the TaskExecutionError around it, whose
 * message repeats the task path; its code when the thrown error has none), with causes a few levels
 * deep; the stacks (without zk-plan's frames, see task-log-lines.ts) only when `withStack`.
 */
export function serializeFailure(error: Error, withStack: boolean): LoggedError {
  const failure = taskFailure(error);
  const logged = loggedFailure(failure, withStack, 0);
  return logged.code === undefined && failure !== error ? { ...logged, ...codeOf(error) } : logged;
}

function loggedFailure(error: Error, withStack: boolean, depth: number): LoggedError {
  const cause = (error as { cause?: unknown }).cause;
  const { path } = error as { path?: unknown };
  return {
    type: error.name,
    message: error.message,
    ...codeOf(error),
    ...(typeof path === 'string' ? { path } : {}),
    ...(withStack ? { stack: userStack(error) } : {}),
    ...(cause === undefined || depth >= 3
      ? {}
      : {
          cause:
            cause instanceof Error ? loggedFailure(cause, withStack, depth + 1) : String(cause),
        }),
  };
}

function codeOf(error: Error): { code?: string } {
  const { code } = error as { code?: unknown };
  return typeof code === 'string' || typeof code === 'number' ? { code: String(code) } : {};
}

/** The fields every task line carries: plan, plan name, task, key, function, try, worker (those the event knows). */
function taskFields(
  event: TaskLineFields & { readonly workerId: string },
): Record<string, unknown> {
  return {
    plan: event.plan,
    ...(event.planName === undefined ? {} : { planName: event.planName }),
    task: event.task,
    ...(event.key === undefined ? {} : { key: event.key }),
    ...(event.fn === undefined ? {} : { fn: event.fn }),
    ...(event.attempt === undefined ? {} : { attempt: event.attempt }),
    ...(event.maxAttempts === undefined ? {} : { maxAttempts: event.maxAttempts }),
    workerId: event.workerId,
  };
}

const STATE_LEVEL: Record<SessionState, Level> = {
  connecting: 'debug',
  connected: 'info',
  suspended: 'warn',
  expired: 'warn',
  closed: 'info',
};

/**
 * Logs every event of the ZkPlan and of its ZooKeeper client as structured fields (`event`,
 * `plan`, `planName`, `task`, `key`, `fn`, `attempt`, `maxAttempts`, `workerId`, `durationMs`,
 * `error` `{ type, message, code, stack, cause }`, …), each with a message that says it all in one
 * line (task-log-lines.ts). Levels: debug for claims and idle rounds, info for starts, completions,
 * tasks aborted by a pause or cancel and session starts, warn for failures that will be retried
 * (or were not the task's fault) and for a session suspended or expired, error for tasks failed for
 * good, worker errors and refused credentials. A failure's stack (without zk-plan's frames) goes
 * with a task failed for good, and with every failure at debug level. Returns what stops the logging.
 */
export function logWorkerEvents(zkPlan: ZkPlan | ObservedZkPlan, logger: Logger): () => void {
  const plan: ObservedZkPlan = zkPlan;
  const zk = plan.zk;
  let previousState: SessionState = zk.state;

  const onClaimed = (event: ZkPlanEvents['task:claimed'][0]): void => {
    logger.debug({ event: 'task:claimed', ...taskFields(event) }, describeTaskClaimed(event));
  };
  const onStarted = (event: ZkPlanEvents['task:started'][0]): void => {
    logger.info({ event: 'task:started', ...taskFields(event) }, describeTaskStarted(event));
  };
  const onCompleted = (event: ZkPlanEvents['task:completed'][0]): void => {
    const { durationMs, reusedResult } = event;
    logger.info(
      {
        event: 'task:completed',
        ...taskFields(event),
        durationMs: Math.round(durationMs * 1000) / 1000,
        reusedResult,
        ...(event.skipped === undefined ? {} : { skipped: event.skipped }),
      },
      describeTaskCompleted(event),
    );
  };
  const onContinued = (event: ZkPlanEvents['task:continued'][0]): void => {
    logger.info(
      {
        event: 'task:continued',
        ...taskFields(event),
        durationMs: Math.round(event.durationMs * 1000) / 1000,
        continuation: event.continuation,
      },
      describeTaskContinued(event),
    );
  };
  const onWaiting = (event: ZkPlanEvents['task:waiting'][0]): void => {
    logger.info(
      {
        event: 'task:waiting',
        ...taskFields(event),
        durationMs: Math.round(event.durationMs * 1000) / 1000,
        reason: event.reason,
        nextCheckAt: event.nextCheckAt.toISOString(),
      },
      describeTaskWaiting(event),
    );
  };
  const onFailed = (event: ZkPlanEvents['task:failed'][0]): void => {
    const { error, charged, final, nextTryAt, givenBack, durationMs } = event;
    const fields = {
      event: 'task:failed',
      ...taskFields(event),
      ...(durationMs === undefined ? {} : { durationMs: Math.round(durationMs * 1000) / 1000 }),
      charged,
      final,
      ...(givenBack === undefined ? {} : { givenBack }),
      ...(nextTryAt === undefined || final ? {} : { nextTryAt: nextTryAt.toISOString() }),
      error: serializeFailure(error, showsStack(event, logger.isLevelEnabled('debug'))),
    };
    logger[taskFailureLevel(event)](fields, describeTaskFailed(event));
  };
  const onIdle = ({ workerId, round, sleepMs }: ZkPlanEvents['worker:idle'][0]): void => {
    logger.debug({ event: 'worker:idle', workerId, round, sleepMs }, 'worker idle');
  };
  const onWorkerError = ({ workerId, error }: ZkPlanEvents['worker:error'][0]): void => {
    logger.error(
      { event: 'worker:error', workerId, error: serializeError(error) },
      `worker error: ${error.message}`,
    );
  };
  const onScheduleTick = ({
    schedules,
    schedule,
    tick,
    state,
    plan,
  }: ZkPlanEvents['schedule:tick'][0]): void => {
    logger.info(
      { event: 'schedule:tick', schedules, schedule, tick, state, plan },
      `schedule ${schedule}: tick ${tick} ${state}`,
    );
  };
  const onScheduleError = ({ schedules, error }: ZkPlanEvents['schedule:error'][0]): void => {
    logger.error(
      { event: 'schedule:error', schedules, error: serializeError(error) },
      `scheduler error: ${error.message}`,
    );
  };
  // Job workers: one line per change of what this process works on, and per manager decision.
  const onJobItem = ({
    jobs,
    job,
    item,
    workerId,
    state,
    token,
    failover,
    reason,
  }: ZkPlanEvents['job:item'][0]): void => {
    const fields = {
      event: 'job:item',
      jobs,
      job,
      item,
      workerId,
      state,
      ...(token === undefined ? {} : { token }),
      ...(reason === undefined ? {} : { reason }),
    };
    if (state === 'started')
      logger.info(
        { ...fields, failover: failover === true },
        describeJobItemStart(job, item, token, failover === true),
      );
    else if (isLostItem(reason)) logger.warn(fields, describeJobItemStop(job, item, reason));
    else logger.info(fields, describeJobItemStop(job, item, reason));
  };
  const onJobRebalance = ({ jobs, epoch, moved }: ZkPlanEvents['job:rebalance'][0]): void => {
    logger.info(
      { event: 'job:rebalance', jobs, epoch, moved },
      describeRebalance(jobs, epoch, moved),
    );
  };
  const onJobError = ({ jobs, job, workerId, error }: ZkPlanEvents['job:error'][0]): void => {
    logger.error(
      {
        event: 'job:error',
        jobs,
        ...(job === undefined ? {} : { job }),
        workerId,
        error: serializeError(error),
      },
      `job ${job ?? jobs}: ${error.message}`,
    );
  };
  const onJobRun = (event: ZkPlanEvents['job:run'][0]): void => {
    if (event.state !== 'ended') return;
    const { jobs, job, workerId, run, cause, attempt, items, outcome, durationMs, error, final } =
      event;
    const fields = {
      event: 'job:run',
      jobs,
      job,
      workerId,
      run,
      cause,
      attempt,
      items: items.map((item) => `${item.id}#${item.token}`),
      ...(outcome === undefined ? {} : { outcome }),
      ...(durationMs === undefined ? {} : { durationMs }),
      ...(error === undefined ? {} : { error: serializeError(error), final: final === true }),
    };
    const line = describeJobRunEnd(event);
    if (outcome === 'failed') logger.warn(fields, line);
    else if (outcome === 'aborted') logger.info(fields, line);
    else logger.debug(fields, line);
  };
  const onJobMisfire = ({
    jobs,
    job,
    workerId,
    tick,
    handling,
  }: ZkPlanEvents['job:misfire'][0]): void => {
    logger.info(
      { event: 'job:misfire', jobs, job, workerId, tick: tick.toISOString(), handling },
      describeMisfire(job, tick, handling),
    );
  };
  const onJobLog = ({
    jobs,
    job,
    workerId,
    run,
    items,
    level,
    msg,
    fields,
  }: ZkPlanEvents['job:log'][0]): void => {
    logger[level](
      {
        ...fields,
        event: 'job:log',
        jobs,
        job,
        workerId,
        run,
        items: items.map((item) => `${item.id}#${item.token}`),
      },
      describeJobLog(job, run, items, msg),
    );
  };
  const onState = (state: SessionState): void => {
    logger[STATE_LEVEL[state]](
      { event: 'session:state', state, previous: previousState },
      `ZooKeeper session ${state}`,
    );
    previousState = state;
  };
  const onSessionStarted = (session: ZkSession): void => {
    logger.info(
      { event: 'session:started', sessionId: session.id, generation: session.generation },
      'ZooKeeper session started',
    );
  };
  const onSessionExpired = (session: ZkSession): void => {
    logger.warn(
      { event: 'session:expired', sessionId: session.id, generation: session.generation },
      'ZooKeeper session expired; opening a new one',
    );
  };
  const onAuthFailed = (error: ZkAuthError): void => {
    logger.error(
      { event: 'auth:failed', error: serializeError(error) },
      `ZooKeeper authentication failed, client closed: ${error.message}`,
    );
  };

  plan.on('task:claimed', onClaimed);
  plan.on('task:started', onStarted);
  plan.on('task:completed', onCompleted);
  plan.on('task:continued', onContinued);
  plan.on('task:waiting', onWaiting);
  plan.on('task:failed', onFailed);
  plan.on('worker:idle', onIdle);
  plan.on('worker:error', onWorkerError);
  plan.on('schedule:tick', onScheduleTick);
  plan.on('schedule:error', onScheduleError);
  plan.on('job:item', onJobItem);
  plan.on('job:rebalance', onJobRebalance);
  plan.on('job:error', onJobError);
  plan.on('job:run', onJobRun);
  plan.on('job:misfire', onJobMisfire);
  plan.on('job:log', onJobLog);
  zk.on('state', onState);
  zk.on('session:started', onSessionStarted);
  zk.on('session:expired', onSessionExpired);
  zk.on('auth:failed', onAuthFailed);

  let stopped = false;
  return () => {
    if (stopped) return;
    stopped = true;
    plan.off('task:claimed', onClaimed);
    plan.off('task:started', onStarted);
    plan.off('task:completed', onCompleted);
    plan.off('task:continued', onContinued);
    plan.off('task:waiting', onWaiting);
    plan.off('task:failed', onFailed);
    plan.off('worker:idle', onIdle);
    plan.off('worker:error', onWorkerError);
    plan.off('schedule:tick', onScheduleTick);
    plan.off('schedule:error', onScheduleError);
    plan.off('job:item', onJobItem);
    plan.off('job:rebalance', onJobRebalance);
    plan.off('job:error', onJobError);
    plan.off('job:run', onJobRun);
    plan.off('job:misfire', onJobMisfire);
    plan.off('job:log', onJobLog);
    zk.off('state', onState);
    zk.off('session:started', onSessionStarted);
    zk.off('session:expired', onSessionExpired);
    zk.off('auth:failed', onAuthFailed);
  };
}
