/**
 * The words of a job worker's log lines, shared by the structured logger and the plain one
 * (src/cli/worker-log.ts, which loads no pino).
 */

/** Why a job worker stops an item against its will (ItemStopReason in src/jobs/job-worker.ts): logged as a warning. */
export const LOST_ITEM_REASONS: ReadonlySet<string> = new Set([
  'lease-lost',
  'lease-ran-out',
  'session-expired',
]);

/** The line for an item a job worker took: a failover names the holder's lapsed lease. */
export function describeJobItemStart(
  job: string,
  item: string,
  token: number | undefined,
  failover: boolean,
): string {
  const taken = `job ${job} item ${item} taken${token === undefined ? '' : ` (token ${token})`}`;
  return failover ? `${taken}: failover, the previous holder's lease ran out` : taken;
}

/** The line for an item a job worker stopped: a loss (LOST_ITEM_REASONS) says its run was aborted. */
export function describeJobItemStop(job: string, item: string, reason: string | undefined): string {
  return isLostItem(reason)
    ? `job ${job} item ${item} lost: ${reason}; its run was aborted`
    : `job ${job} item ${item} given up (${reason ?? 'stopped'})`;
}

/** Whether a stop was against the job worker's will: logged as a warning. */
export function isLostItem(reason: string | undefined): boolean {
  return reason !== undefined && LOST_ITEM_REASONS.has(reason);
}

/** The manager's line for a new assignment. */
export function describeRebalance(jobs: string, epoch: number, moved: number): string {
  return `job manager: new assignment under ${jobs} (epoch ${epoch}, ${moved} item(s) moved)`;
}
