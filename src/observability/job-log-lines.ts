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

/** The line for a run that ended: its job, cause, try, outcome and, for a failed one, what comes next. */
export function describeJobRunEnd(event: {
  readonly job: string;
  readonly run: string;
  readonly cause: string;
  readonly attempt: number;
  readonly outcome?: string;
  readonly durationMs?: number;
  readonly error?: Error;
  readonly final?: boolean;
}): string {
  const what = `job ${event.job} ${event.cause} run ${event.run} (try ${event.attempt})`;
  const took = event.durationMs === undefined ? '' : ` after ${Math.round(event.durationMs)} ms`;
  if (event.outcome !== 'failed') return `${what} ${event.outcome ?? 'ended'}${took}`;
  const next = event.final === true ? 'no retry left before the next tick' : 'it is retried';
  return `${what} failed${took}: ${event.error?.message ?? 'no message'}; ${next}`;
}

/** The line for a tick that came while the previous run still ran. */
export function describeMisfire(job: string, tick: Date, handling: string): string {
  return handling === 'skipped'
    ? `job ${job}: the tick of ${tick.toISOString()} came while the previous run still ran: skipped (misfire: 'skip')`
    : `job ${job}: the tick of ${tick.toISOString()} came while the previous run still ran: run once right after it`;
}

/** The line for a job function's `ctx.log`: its job, run, the share's items with their tokens, and the message. */
export function describeJobLog(
  job: string,
  run: string,
  items: readonly { readonly id: string; readonly token: number }[],
  msg: string,
): string {
  const shown = items.slice(0, 5).map((item) => `${item.id}#${item.token}`);
  const more = items.length > 5 ? ` +${items.length - 5}` : '';
  return `job ${job} run ${run} [${shown.join(' ')}${more}]: ${msg}`;
}
