/**
 * What a job's function is given: its share of the work pool, with a fencing token per item, and
 * a signal aborted when the share changes or a lease is lost.
 */

import type { TaskLogger } from '../logs/task-log-types.js';
import type { JobRunCause } from './job-run-record.js';

/**
 * One item of a worker's share.
 *
 * @category Jobs
 */
export interface JobItem {
  readonly id: string;
  /** The shard's params (`workPool.params[i]`), if any. */
  readonly params?: unknown;
  /**
   * The item's fencing token for this holder: greater than every earlier holder's token of this
   * item (one more than ZooKeeper's transaction id of the lease version it replaced), also after
   * the item or the job was removed and added again. Tokens of different items are not ordered:
   * a sink keeps the highest token it saw per item and refuses a write with a lower one.
   */
  readonly token: number;
}

/**
 * What a job function gets on each run: the job, its worker, the items this worker holds leases on,
 * a signal that aborts when the share changes, and `holding()` to check the leases before a side
 * effect.
 *
 * @category Jobs
 */
export interface JobContext {
  /** The job's name. */
  readonly job: string;
  /** The job worker running it. */
  readonly workerId: string;
  /** This worker's share: the items it holds a lease on, in id order. */
  readonly items: readonly JobItem[];
  /**
   * Aborted when the share changes (an item is taken away or added), a lease is lost or runs out
   * before it could be renewed, the worker stops, or its session expires. Stop then: the item's
   * next holder starts only once this run has returned (or its lease has run out).
   */
  readonly signal: AbortSignal;
  /**
   * True while every lease of the share is still held, by this process's monotonic clock, right
   * now (it also aborts `signal` once they are not). Timers of a process that was frozen may fire
   * before the runtime's own: call this right before each side effect that must not overlap
   * another holder's, or hand the tokens to the sink.
   */
  holding(): boolean;
  /** The time this run was due (`everyMs` and cron modes, and triggers); undefined for continuous runs. */
  readonly firedAt?: Date;
  /** Why this run started: its tick, a trigger, a misfire's catch-up, a failover, a retry, or a continuous job's run. */
  readonly cause: JobRunCause;
  /** Tries of the same due run so far, this one included (more than 1 for a retry). */
  readonly attempt: number;
  /**
   * The run's log: each line goes to the job worker's log (`zk-plan worker` prints it) with the
   * job, the run and the share's items and tokens, as a `job:log` event.
   */
  readonly log: TaskLogger;
}

/**
 * A job function: registered with `FunctionRegistry.registerJob`. Its result is ignored; a throw fails the run (recorded in the job's history and reported as `job:run`), which is retried as the job's `retries` says.
 *
 * @category Jobs
 */
export type JobFunction = (ctx: JobContext) => unknown;
