/**
 * Tasks' logs in ZooKeeper, under `<plan>/logs` (see src/zk/layout.ts): one node per try, written
 * whole at each flush (create, then setData), so a write repeated after a lost reply, or by a
 * process that lost its session, leaves the same node with the same or a later tail. Nothing here
 * creates the plan node: a plan deleted while its task logs makes the next write fail with
 * NO_NODE, and the writer stops.
 */
import { isZkError } from '../errors/zk-error.js';
import { LOGS, LOG_TRY_PREFIX, childPath, nameOf, parentOf } from '../zk/layout.js';
import type { Zk } from '../zk/zk.js';
import { decodeAttemptLog, encodeAttemptLog, type TaskLogAttempt } from './attempt-log-record.js';

/** Tries read back per task, at most: more are malformed (a task has maxAttempts tries, each maybe given back a few times). */
export const MAX_TRIES_READ = 1_000;
/** Reservation attempts against concurrent writers before a flush gives up reserving (and keeps what it has). */
const MAX_RESERVE_ROUNDS = 20;

const TRY_NAME = /^try-(\d{4,9})-([0-9a-f]{1,32})$/;

export type LogWrite = 'written' | 'plan-gone';

/** The name of a try's log node: its attempt number (sorts) and the run's own id (tells two runs of one attempt apart). */
export function tryNodeName(attempt: number, runId: string): string {
  return `${LOG_TRY_PREFIX}${String(attempt).padStart(4, '0')}-${runId}`;
}

export function taskLogsPath(task: string): string {
  return childPath(childPath(parentOf(task), LOGS), nameOf(task));
}

export class TaskLogStore {
  constructor(private readonly zk: Zk) {}

  /**
   * Writes a try's record: the first write creates the nodes on the way (never the plan), a later
   * one sets the data. `created` says the node is known to exist (the caller's previous write).
   */
  async write(
    task: string,
    tryName: string,
    record: TaskLogAttempt,
    created: boolean,
  ): Promise<LogWrite> {
    const path = childPath(taskLogsPath(task), tryName);
    const data = encodeAttemptLog(record);
    try {
      if (created) {
        await this.zk.setData(path, data);
        return 'written';
      }
      const logs = parentOf(taskLogsPath(task));
      await this.zk.createIfAbsent(logs, Buffer.from(JSON.stringify({ reservedBytes: 0 })));
      await this.zk.createIfAbsent(taskLogsPath(task));
      if (!(await this.zk.createIfAbsent(path, data))) await this.zk.setData(path, data); // a resent first write
      return 'written';
    } catch (error) {
      if (isZkError(error, 'NO_NODE')) return 'plan-gone';
      throw error;
    }
  }

  /**
   * Takes up to `bytes` of the plan's log budget (less as it runs low: see grantOf) (`<plan>/logs`' reservedBytes, at most
   * `maxBytesPerPlan`) and answers how many it got. A compare-and-set on the node's version keeps
   * two writers from taking the same bytes; a reservation whose reply was lost may be counted twice,
   * which errs on the side of less, never more, in ZooKeeper.
   */
  async reserve(plan: string, bytes: number, maxBytesPerPlan: number): Promise<number> {
    const logs = childPath(plan, LOGS);
    for (let round = 0; round < MAX_RESERVE_ROUNDS; round += 1) {
      let read: { data: Buffer | null; stat: { version: number } } | undefined;
      try {
        read = await this.zk.tryGetData(logs);
        if (read === undefined) {
          await this.zk.createIfAbsent(logs, Buffer.from(JSON.stringify({ reservedBytes: 0 })));
          continue;
        }
      } catch (error) {
        if (isZkError(error, 'NO_NODE')) return 0; // the plan is gone
        throw error;
      }
      const reserved = reservedBytesOf(read.data);
      const granted = grantOf(bytes, maxBytesPerPlan - reserved);
      if (granted === 0) return 0;
      try {
        await this.zk.setData(
          logs,
          Buffer.from(JSON.stringify({ reservedBytes: reserved + granted })),
          read.stat.version,
        );
        return granted;
      } catch (error) {
        if (isZkError(error, 'NO_NODE')) return 0;
        if (!isZkError(error, 'BAD_VERSION')) throw error;
      }
    }
    return 0;
  }

  /** Every try's record of a task with its node name, oldest first (by attempt, then start); empty when it never logged. */
  async read(
    task: string,
  ): Promise<{ readonly tryName: string; readonly record: TaskLogAttempt }[]> {
    const dir = taskLogsPath(task);
    const listing = await this.zk.tryGetChildren(dir);
    if (listing === undefined) return [];
    const names = listing.children.filter((name) => TRY_NAME.test(name)).slice(0, MAX_TRIES_READ);
    const tries = await Promise.all(
      names.map(async (tryName) => {
        const record = await this.readTry(childPath(dir, tryName));
        return record === undefined ? undefined : { tryName, record };
      }),
    );
    return tries
      .filter((read) => read !== undefined)
      .sort((a, b) => byAttemptThenStart(a.record, b.record));
  }

  /** One try's record, undefined when it is gone (the plan was deleted meanwhile). */
  async readTry(path: string): Promise<TaskLogAttempt | undefined> {
    const read = await this.zk.tryGetData(path);
    return read === undefined ? undefined : decodeAttemptLog(path, read.data);
  }
}

/** The smallest share a try gets while the budget lasts. */
const MIN_GRANT_BYTES = 1_024;
/** Once the budget runs low, a try gets at most this fraction of what is left, so that the last ones still keep their last lines. */
const LOW_BUDGET_SHARE = 1 / 64;

/**
 * How much of `remaining` a try asking for `bytes` gets: all it asks while the budget is large, then
 * a shrinking share of what is left (never below MIN_GRANT_BYTES while that much is left). A plan of
 * many chatty tasks thus keeps a shorter tail for more of them instead of full tails for the first few.
 */
export function grantOf(bytes: number, remaining: number): number {
  if (remaining <= 0 || bytes <= 0) return 0;
  const share = Math.max(MIN_GRANT_BYTES, Math.floor(remaining * LOW_BUDGET_SHARE));
  return Math.min(bytes, share, remaining);
}

function byAttemptThenStart(a: TaskLogAttempt, b: TaskLogAttempt): number {
  return a.attempt - b.attempt || a.startedAt.getTime() - b.startedAt.getTime();
}

/** The budget count of `<plan>/logs`; a value nobody could have written counts as all of it taken. */
function reservedBytesOf(data: Buffer | null): number {
  if (data === null || data.length === 0) return 0;
  if (data.length > 100) return Number.MAX_SAFE_INTEGER;
  try {
    const value = (JSON.parse(data.toString('utf8')) as { reservedBytes?: unknown }).reservedBytes;
    return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0
      ? value
      : Number.MAX_SAFE_INTEGER;
  } catch {
    return Number.MAX_SAFE_INTEGER;
  }
}
