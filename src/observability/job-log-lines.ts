/**
 * The words of a job worker's log lines, shared by the structured logger and the plain one
 * (src/cli/worker-log.ts, which loads no pino).
 */

/** Why a job worker stops an item against its will (ItemStopReason in src/jobs/job-worker.ts): logged as a warning. */
export const LOST_ITEM_REASONS: ReadonlySet<string> = new Set(['lease-lost', 'lease-ran-out', 'session-expired']);

/** The line for an item a job worker took: a failover names the holder's lapsed lease. */
export function describeJobItemStart(job: string, item: string, token: number | undefined, failover: boolean): string {
  const taken = `job ${job} item ${item} taken${token === undefined ? '' : ` (token ${token})`}`;
  return failover ? `${taken}: failover, the previous holder's lease ran out` : taken;
}
