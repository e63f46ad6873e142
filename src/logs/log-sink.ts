import type { LogLine } from './task-log-types.js';

/**
 * Which try of which task a sink is asked to keep the log of.
 *
 * @category Logs
 */
export interface TryIdentity {
  readonly plan: string;
  readonly task: string;
  readonly attempt: number;
  /** The try's node name under `<plan>/logs/task-N` (unique per run). */
  readonly tryName: string;
  readonly workerId: string;
}

/**
 * Where a worker keeps tasks' whole logs, beside the bounded tail in ZooKeeper: files on the
 * worker's disk by default (FileLogSink), or whatever a user plugs in (a log shipper, object
 * storage). The location it answers is stored in the try's record, so a reader knows where to
 * look (`zk-plan logs` prints it).
 *
 * @category Logs
 */
export interface LogSink {
  /** Opens the log of one try; lines follow with `write`, and `close` ends it. */
  open(identity: TryIdentity): TrySink;
  /**
   * Removes what the sink holds of plans that no longer exist (`planExists` answers from
   * ZooKeeper). Called by the worker pool from time to time, so that deleting a plan, or
   * retention, removes its logs here too.
   */
  prune?(planExists: (plan: string) => Promise<boolean>): Promise<void>;
}

/**
 * The whole log of one try, as a LogSink opened it: lines go in with `write` until `close`.
 *
 * @category Logs
 */
export interface TrySink {
  /** Where the whole log is, as a reader on the worker's host would find it (a file path). */
  readonly location: string;
  /** Where a reader on another host gets the whole log, when the worker serves it (startLogServer). */
  readonly url?: string | undefined;
  /** Keeps one line (synchronously queued; a sink must not throw). */
  write(line: LogLine): void;
  /** Ends the try's log once every line is written. */
  close(): Promise<void>;
}
