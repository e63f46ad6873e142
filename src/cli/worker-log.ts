/** The logs of `zk-plan worker` on stderr: plain lines, pretty lines or JSON lines (--log-format). */
import {
  describeJobItemStart,
  describeJobItemStop,
  describeJobLog,
  describeJobRunEnd,
  describeMisfire,
  describeRebalance,
  isLostItem,
} from '../observability/job-log-lines.js';
import {
  describeTaskClaimed,
  describeTaskCompleted,
  describeTaskContinued,
  describeTaskFailed,
  describeTaskStarted,
  showsStack,
  stackLines,
  taskFailureLevel,
} from '../observability/task-log-lines.js';
import type { ZkPlan } from '../zk-plan.js';
import type { ZkPlanEvents } from '../worker/worker-events.js';
import type { SessionState } from '../zk/zk-client-types.js';
import { printable } from '../util/printable.js';

export type LogFormat = 'plain' | 'pretty' | 'json';

export interface WorkerLog {
  /** Logs the ZkPlan's events; returns what stops that. */
  follow(zkPlan: ZkPlan): () => void;
  info(message: string): void;
  warn(message: string): void;
  flush(): void;
}

/**
 * JSON lines (pino, through src/observability: see createLogger and logWorkerEvents) or, for a
 * person, plain or pretty lines (terminalLog), on stderr.
 */
export async function createWorkerLog(format: LogFormat, level: string): Promise<WorkerLog> {
  if (format !== 'json')
    return terminalLog(level, {
      format,
      colors:
        format === 'pretty' &&
        process.stderr.isTTY === true &&
        process.env['NO_COLOR'] === undefined,
    });
  const [{ pino }, { createLogger, logWorkerEvents }] = await Promise.all([
    import('pino'),
    import('../observability/logger.js'),
  ]);
  const logger = createLogger({
    level,
    pretty: false,
    destination: pino.destination({ dest: 2, sync: true }),
  });
  return {
    follow: (zkPlan) => logWorkerEvents(zkPlan, logger),
    info: (message) => logger.info({ event: 'worker:lifecycle' }, message),
    warn: (message) => logger.warn({ event: 'worker:lifecycle' }, message),
    flush: () => logger.flush(),
  };
}

const LEVEL_RANK: Readonly<Record<string, number>> = {
  trace: 10,
  debug: 20,
  info: 30,
  warn: 40,
  error: 50,
  fatal: 60,
  silent: Number.POSITIVE_INFINITY,
};
const DEBUG = 20;
const INFO = 30;
const WARN = 40;
const ERROR = 50;
const RANK_OF = { info: INFO, warn: WARN, error: ERROR } as const;

/** Level names of pretty lines, padded to one width, and their colours (SGR codes). */
const LEVEL_LABEL: Readonly<Record<number, readonly [string, number]>> = {
  [DEBUG]: ['DEBUG', 90],
  [INFO]: ['INFO ', 32],
  [WARN]: ['WARN ', 33],
  [ERROR]: ['ERROR', 31],
};

export interface TerminalLogOptions {
  /** `plain`: `zk-plan worker: <message>`; `pretty`: `[HH:MM:ss.mmm] LEVEL <message>`. @defaultValue 'plain' */
  readonly format?: 'plain' | 'pretty';
  /** Colour the level of pretty lines. @defaultValue false */
  readonly colors?: boolean;
  /** Where each entry goes (a line, with the lines of its stack when it has one). @defaultValue standard error */
  readonly writeLine?: (line: string) => void;
  /** The time of a pretty line, and the time a retry is counted from. @defaultValue the clock */
  readonly now?: () => Date;
}

/**
 * The log of `zk-plan worker` for a person: one line per event (task claimed at debug level,
 * started, completed, failed and retried, failed for good, released on drain, aborted by a pause
 * or cancel…; worker errors, session expiry, schedule ticks, job items), each one line that names
 * the task by path, key, function and plan name and says which try of how many. Below a task failed
 * for good (and below every failure at debug level), the stack of the task's own code: zk-plan's
 * frames and Node's are left out.
 *
 * Every line is made printable (src/util/printable.ts) and one line: a message comes from whoever
 * failed the task, and with escape sequences or a `\r` it could clear the screen or overwrite the
 * line; with a line break it could print a line that looks like another entry (shown as ` ⏎ `).
 * Stack lines are indented, so none can pass for an entry.
 */
export function terminalLog(level: string, options: TerminalLogOptions = {}): WorkerLog {
  const threshold = LEVEL_RANK[level] ?? INFO;
  const debug = threshold <= DEBUG;
  const now = options.now ?? ((): Date => new Date());
  const writeLine =
    options.writeLine ?? ((line: string): void => void process.stderr.write(`${line}\n`));
  const prefix = (rank: number): string =>
    options.format === 'pretty'
      ? prettyPrefix(rank, now(), options.colors === true)
      : 'zk-plan worker: ';
  const write = (rank: number, message: string, stack: readonly string[] = []): void => {
    if (rank < threshold) return;
    const lines = [
      `${prefix(rank)}${printable(message, { multiline: false })}`,
      ...stack.map((line) => printable(line, { multiline: false })),
    ];
    writeLine(lines.join('\n'));
  };
  return {
    follow(zkPlan) {
      const onClaimed = (event: ZkPlanEvents['task:claimed'][0]): void =>
        write(DEBUG, describeTaskClaimed(event));
      const onStarted = (event: ZkPlanEvents['task:started'][0]): void =>
        write(INFO, describeTaskStarted(event));
      const onCompleted = (event: ZkPlanEvents['task:completed'][0]): void =>
        write(INFO, describeTaskCompleted(event));
      const onContinued = (event: ZkPlanEvents['task:continued'][0]): void =>
        write(INFO, describeTaskContinued(event));
      const onFailed = (event: ZkPlanEvents['task:failed'][0]): void =>
        write(
          RANK_OF[taskFailureLevel(event)],
          describeTaskFailed(event, now().getTime()),
          showsStack(event, debug) ? stackLines(event.error) : [],
        );
      const onError = ({ workerId, error }: ZkPlanEvents['worker:error'][0]): void =>
        write(
          ERROR,
          `worker error on ${workerId}: ${inCliWords(error)}`,
          debug ? framesOf(error) : [],
        );
      const onExpired = (): void => write(WARN, 'ZooKeeper session expired; opening a new one');
      let previousState: SessionState = zkPlan.zk.state;
      const onState = (state: SessionState): void => {
        if (state === 'suspended')
          write(
            WARN,
            'ZooKeeper connection lost; reconnecting (running tasks go on while the session lives)',
          );
        else if (state === 'connected' && previousState === 'suspended')
          write(INFO, 'ZooKeeper connection back, same session');
        previousState = state;
      };
      const onAuthFailed = (error: Error): void =>
        write(ERROR, `ZooKeeper authentication failed, client closed: ${error.message}`);
      const onTick = ({ schedule, tick, state }: ZkPlanEvents['schedule:tick'][0]): void =>
        write(INFO, `schedule ${schedule}: tick ${tick} ${state}`);
      const onScheduleError = ({ error }: ZkPlanEvents['schedule:error'][0]): void =>
        write(ERROR, `scheduler error: ${inCliWords(error)}`);
      const onJobItem = ({
        job,
        item,
        state,
        token,
        failover,
        reason,
      }: ZkPlanEvents['job:item'][0]): void => {
        if (state === 'started')
          write(INFO, describeJobItemStart(job, item, token, failover === true));
        else write(isLostItem(reason) ? WARN : INFO, describeJobItemStop(job, item, reason));
      };
      const onRebalance = ({ jobs, epoch, moved }: ZkPlanEvents['job:rebalance'][0]): void =>
        write(INFO, describeRebalance(jobs, epoch, moved));
      const onJobError = ({ jobs, job, error }: ZkPlanEvents['job:error'][0]): void =>
        write(ERROR, `job ${job ?? jobs}: ${inCliWords(error)}`);
      // A run that succeeded is no line here (the history has it); one that failed or was aborted is.
      const onJobRun = (event: ZkPlanEvents['job:run'][0]): void => {
        if (event.state !== 'ended' || event.outcome === 'succeeded') return;
        write(event.outcome === 'failed' ? WARN : INFO, describeJobRunEnd(event));
      };
      const onMisfire = ({ job, tick, handling }: ZkPlanEvents['job:misfire'][0]): void =>
        write(INFO, describeMisfire(job, tick, handling));
      const onJobLog = ({ job, run, items, level, msg }: ZkPlanEvents['job:log'][0]): void =>
        write(
          level === 'error' ? ERROR : level === 'warn' ? WARN : INFO,
          describeJobLog(job, run, items, msg),
        );
      zkPlan.on('task:claimed', onClaimed);
      zkPlan.on('task:started', onStarted);
      zkPlan.on('task:completed', onCompleted);
      zkPlan.on('task:continued', onContinued);
      zkPlan.on('task:failed', onFailed);
      zkPlan.on('worker:error', onError);
      zkPlan.on('schedule:tick', onTick);
      zkPlan.on('schedule:error', onScheduleError);
      zkPlan.on('job:item', onJobItem);
      zkPlan.on('job:rebalance', onRebalance);
      zkPlan.on('job:error', onJobError);
      zkPlan.on('job:run', onJobRun);
      zkPlan.on('job:misfire', onMisfire);
      zkPlan.on('job:log', onJobLog);
      zkPlan.zk.on('session:expired', onExpired);
      zkPlan.zk.on('state', onState);
      zkPlan.zk.on('auth:failed', onAuthFailed);
      return () => {
        zkPlan.off('task:claimed', onClaimed);
        zkPlan.off('task:started', onStarted);
        zkPlan.off('task:completed', onCompleted);
        zkPlan.off('task:continued', onContinued);
        zkPlan.off('task:failed', onFailed);
        zkPlan.off('worker:error', onError);
        zkPlan.off('schedule:tick', onTick);
        zkPlan.off('schedule:error', onScheduleError);
        zkPlan.off('job:item', onJobItem);
        zkPlan.off('job:rebalance', onRebalance);
        zkPlan.off('job:error', onJobError);
        zkPlan.off('job:run', onJobRun);
        zkPlan.off('job:misfire', onMisfire);
        zkPlan.off('job:log', onJobLog);
        zkPlan.zk.off('session:expired', onExpired);
        zkPlan.zk.off('state', onState);
        zkPlan.zk.off('auth:failed', onAuthFailed);
      };
    },
    info: (message) => write(INFO, message),
    warn: (message) => write(WARN, message),
    flush: () => undefined,
  };
}

/** The plain worker log (`zk-plan worker: <message>`); see terminalLog. */
export function plainLog(level: string, writeLine?: (line: string) => void): WorkerLog {
  return terminalLog(level, { format: 'plain', ...(writeLine ? { writeLine } : {}) });
}

/** `[HH:MM:ss.mmm] LEVEL `, as pino-pretty lays out a line, the level coloured on a terminal that takes colours. */
function prettyPrefix(rank: number, at: Date, colors: boolean): string {
  const [label, color] = LEVEL_LABEL[rank] ?? ['     ', 0];
  const pad = (value: number, width = 2): string => String(value).padStart(width, '0');
  const time = `${pad(at.getHours())}:${pad(at.getMinutes())}:${pad(at.getSeconds())}.${pad(at.getMilliseconds(), 3)}`;
  return `[${time}] ${colors ? `\x1b[${color}m${label}\x1b[39m` : label} `;
}

/** An error's message as the `zk-plan` command says it (ZkPlanError's cliMessage), else as it is. */
function inCliWords(error: Error): string {
  const { cliMessage } = error as { cliMessage?: unknown };
  return typeof cliMessage === 'string' ? cliMessage : error.message;
}

/** Every frame of a worker error's stack: an error of zk-plan itself, for whoever debugs it. */
function framesOf(error: Error): string[] {
  return (error.stack ?? '')
    .split('\n')
    .filter((line) => /^\s*at /.test(line))
    .map((line) => `    ${line.trim()}`);
}

/** The worker's line for an alert the webhook did not take (the webhook's errors name its origin only, never its secret path). */
export function logUndeliveredAlert(
  log: Pick<WorkerLog, 'info'>,
  error: Error,
  eventId: string | undefined,
): void {
  log.info(`alert ${eventId ?? ''} not delivered: ${error.message}`);
}
