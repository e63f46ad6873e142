/** The logs of `zk-plan worker` on stderr: plain lines, pretty lines or JSON lines (--log-format). */
import { describeJobItemStart, describeJobItemStop, describeRebalance, isLostItem } from '../observability/job-log-lines.js';
import type { ZkPlan } from '../plan/zk-plan.js';
import type { ZkPlanEvents } from '../worker/worker-events.js';
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
 * Structured logs (pino, through src/observability: pretty lines or JSON lines, both safe on a
 * terminal, see createLogger) or plain lines, on stderr.
 */
export async function createWorkerLog(format: LogFormat, level: string): Promise<WorkerLog> {
  if (format === 'plain') return plainLog(level);
  const [{ pino }, { createLogger, logWorkerEvents }] = await Promise.all([import('pino'), import('../observability/logger.js')]);
  const logger = createLogger({ level, pretty: format === 'pretty', destination: pino.destination({ dest: 2, sync: true }) });
  return {
    follow: (zkPlan) => logWorkerEvents(zkPlan, logger),
    info: (message) => logger.info({ event: 'worker:lifecycle' }, message),
    warn: (message) => logger.warn({ event: 'worker:lifecycle' }, message),
    flush: () => logger.flush(),
  };
}

const LEVEL_RANK: Readonly<Record<string, number>> = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60, silent: Number.POSITIVE_INFINITY };

/**
 * One line per failure, worker error and lifecycle step: `zk-plan worker: task failed: <task> on
 * <worker>: <message>`. The line is what `writeLine` gets (stderr unless told), made printable
 * (src/util/printable.ts) and one line: a message comes from whoever failed the task, and with
 * escape sequences or a `\r` it could clear the screen or overwrite the line; with a line break it
 * could print a line that looks like another entry (shown as ` ⏎ `).
 */
export function plainLog(level: string, writeLine: (line: string) => void = (line) => process.stderr.write(`${line}\n`)): WorkerLog {
  const threshold = LEVEL_RANK[level] ?? 30;
  const write = (rank: number, message: string): void => {
    if (rank >= threshold) writeLine(`zk-plan worker: ${printable(message, { multiline: false })}`);
  };
  return {
    follow(zkPlan) {
      const onFailed = ({ task, workerId, error, final }: { task: string; workerId: string; error: Error; final: boolean }): void =>
        write(final ? 50 : 40, `task failed: ${task} on ${workerId}: ${error.message}${final ? ' (failed for good)' : ''}`);
      const onError = ({ workerId, error }: { workerId: string; error: Error }): void => write(50, `worker error on ${workerId}: ${error.message}`);
      const onExpired = (): void => write(40, 'ZooKeeper session expired; opening a new one');
      const onJobItem = ({ job, item, state, token, failover, reason }: ZkPlanEvents['job:item'][0]): void => {
        if (state === 'started') write(30, describeJobItemStart(job, item, token, failover === true));
        else write(isLostItem(reason) ? 40 : 30, describeJobItemStop(job, item, reason));
      };
      const onRebalance = ({ jobs, epoch, moved }: ZkPlanEvents['job:rebalance'][0]): void => write(30, describeRebalance(jobs, epoch, moved));
      const onJobError = ({ jobs, job, error }: ZkPlanEvents['job:error'][0]): void => write(50, `job ${job ?? jobs}: ${error.message}`);
      zkPlan.on('task:failed', onFailed);
      zkPlan.on('worker:error', onError);
      zkPlan.on('job:item', onJobItem);
      zkPlan.on('job:rebalance', onRebalance);
      zkPlan.on('job:error', onJobError);
      zkPlan.zk.on('session:expired', onExpired);
      return () => {
        zkPlan.off('task:failed', onFailed);
        zkPlan.off('worker:error', onError);
        zkPlan.off('job:item', onJobItem);
        zkPlan.off('job:rebalance', onRebalance);
        zkPlan.off('job:error', onJobError);
        zkPlan.zk.off('session:expired', onExpired);
      };
    },
    info: (message) => write(30, message),
    warn: (message) => write(40, message),
    flush: () => undefined,
  };
}

/** The worker's line for an alert the webhook did not take (the webhook's errors name its origin only, never its secret path). */
export function logUndeliveredAlert(log: Pick<WorkerLog, 'info'>, error: Error, eventId: string | undefined): void {
  log.info(`alert ${eventId ?? ''} not delivered: ${error.message}`);
}
