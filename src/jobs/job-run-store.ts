/**
 * ZooKeeper I/O of a jobs' parent's run history (layout in src/zk/layout.ts, records in
 * job-run-record.ts): a run's node is created when it starts and written again when it ends; the
 * oldest runs beyond the job's `keepRuns` are deleted; each item's last failure is kept in its own
 * node, apart from the runs, so that it outlives them. Every write is a create-if-absent of a name
 * decided beforehand, an unconditional set of the writer's own node, or a delete, so each is safe
 * to send again after a lost reply. History is not what keeps items apart (the leases are): a
 * write that fails is reported and the run goes on.
 */
import { MalformedNodeError } from '../errors/task-errors.js';
import { isZkError } from '../errors/zk-error.js';
import { decodeValue, encodeValue } from '../serialization/codec.js';
import { JOB_RUN_LOG, childPath, jobNodes, jobsNodes } from '../zk/layout.js';
import { TaskLogStore } from '../logs/task-log-store.js';
import type { LogLine } from '../logs/task-log-types.js';
import type { WriteOptions } from '../zk/zk-client-types.js';
import type { Zk } from '../zk/zk.js';
import {
  parseRunRecord,
  runStartOf,
  runWorkerOf,
  runsBeyond,
  sortRuns,
  type JobRunError,
  type JobRunItem,
  type JobRunRecord,
} from './job-run-record.js';

/**
 * An item's last failed run, as kept apart from the history (`jobs.runs(name).lastFailures`).
 *
 * @category Jobs
 */
export interface JobItemFailure {
  /** The run's node name (it may have left the history since). */
  readonly run: string;
  readonly worker: string;
  readonly token: number;
  readonly attempt: number;
  readonly finishedAt: string;
  readonly error: JobRunError;
}

export class JobRunStore {
  constructor(
    private readonly zk: Zk,
    readonly parent: string,
  ) {}

  /** Writes a run's first record (its node is created; a resend finds it there). */
  async started(name: string, record: JobRunRecord): Promise<void> {
    const { runs } = jobNodes(this.parent, record.job);
    await this.zk.ensurePath(runs);
    await this.zk.createIfAbsent(
      childPath(runs, name),
      encodeValue(record, 'job run record'),
      'persistent',
    );
  }

  /** Writes a run's record again as it ended; a node pruned meanwhile is left gone. */
  async ended(name: string, record: JobRunRecord): Promise<void> {
    const path = childPath(jobNodes(this.parent, record.job).runs, name);
    try {
      await this.zk.setData(path, encodeValue(record, 'job run record', path), -1);
    } catch (error) {
      if (!isZkError(error, 'NO_NODE')) throw error;
    }
  }

  /** Keeps each item's last failure (with the token it was held with): one node per item, written over. */
  async failed(
    job: string,
    items: readonly JobRunItem[],
    failure: Omit<JobItemFailure, 'token'>,
  ): Promise<void> {
    const { failures } = jobNodes(this.parent, job);
    await this.zk.ensurePath(failures);
    await Promise.all(
      items.map(async (item) => {
        const path = childPath(failures, item.id);
        const data = encodeValue({ ...failure, token: item.token }, 'job item failure', path);
        if (!(await this.zk.createIfAbsent(path, data, 'persistent')))
          await this.zk.setData(path, data, -1);
      }),
    );
  }

  /**
   * Deletes the oldest runs beyond `keep`, but never the record of a run that has not ended while
   * its worker lives, or for UNFINISHED_KEPT_MS after it started (by `now`): the failover lookup of
   * the worker that takes its items reads it, and a worker with a slow clock names its runs older
   * than they are. Resolves how many it deleted.
   */
  async prune(job: string, keep: number, now: number): Promise<number> {
    const { runs } = jobNodes(this.parent, job);
    const names = (await this.zk.tryGetChildren(runs))?.children ?? [];
    const beyond = runsBeyond(names, keep);
    const deletable = await Promise.all(
      beyond.map(async (name) => {
        const record = await this.read(job, name);
        if (record === undefined || record.outcome !== undefined) return true;
        if (now - (runStartOf(name) ?? 0) < UNFINISHED_KEPT_MS) return false;
        const worker = childPath(jobsNodes(this.parent).workers, record.worker);
        return (await this.zk.exists(worker)) === undefined;
      }),
    );
    const gone = beyond.filter((_, index) => deletable[index] === true);
    // With their logs (`<run>/logs`): a writer still flushing there finds the node gone and stops.
    await Promise.all(gone.map((name) => this.zk.deleteRecursive(childPath(runs, name))));
    return gone.length;
  }

  /** A run's node. */
  runPath(job: string, run: string): string {
    return childPath(jobNodes(this.parent, job).runs, run);
  }

  /** The lines a run's function wrote with `ctx.log`, as the task log store keeps them (its tail). */
  async runLog(job: string, run: string): Promise<readonly LogLine[]> {
    const tries = await new TaskLogStore(this.zk).read(
      childPath(this.runPath(job, run), JOB_RUN_LOG),
    );
    return tries.flatMap(({ record }) => record.lines);
  }

  /** The job's run node names, oldest first. */
  async names(job: string): Promise<string[]> {
    return sortRuns(
      (await this.zk.tryGetChildren(jobNodes(this.parent, job).runs))?.children ?? [],
    );
  }

  /** A run's record; undefined when it is gone, or holds no record zk-plan writes. */
  async read(job: string, name: string): Promise<JobRunRecord | undefined> {
    const path = childPath(jobNodes(this.parent, job).runs, name);
    const node = await this.zk.tryGetData(path);
    if (node === undefined) return undefined;
    try {
      return parseRunRecord(path, decodeValue(path, node.data));
    } catch (error) {
      if (error instanceof MalformedNodeError) return undefined;
      throw error;
    }
  }

  /**
   * For each of `items`, the newest run of `worker` that holds it, if that run was interrupted: it
   * never ended (the worker died in it), or its worker aborted it (cut off, it lost the lease).
   * That is the run a failover runs again. One listing, and only that worker's newest few runs
   * read (its id is in their names), however many items are asked about.
   */
  async interruptedRuns(
    job: string,
    worker: string,
    items: readonly string[],
  ): Promise<Map<string, string>> {
    const theirs = (await this.names(job)).filter((name) => runWorkerOf(name) === worker);
    const newest = theirs.reverse().slice(0, INTERRUPTED_LOOKBACK);
    const records = await Promise.all(newest.map((name) => this.read(job, name)));
    const found = new Map<string, string>();
    const settled = new Set<string>();
    for (const [index, record] of records.entries()) {
      if (record === undefined) continue;
      const interrupted = record.outcome === undefined || record.outcome === 'aborted';
      for (const { id } of record.items) {
        if (settled.has(id) || !items.includes(id)) continue;
        settled.add(id); // its newest run decides
        if (interrupted) found.set(id, newest[index] as string);
      }
    }
    return found;
  }

  /** Each item's last failure, by item (malformed nodes left out). */
  async lastFailures(job: string): Promise<Record<string, JobItemFailure>> {
    const { failures } = jobNodes(this.parent, job);
    const items = ((await this.zk.tryGetChildren(failures))?.children ?? []).sort();
    const read = await Promise.all(
      items.map(async (item) => {
        const path = childPath(failures, item);
        const node = await this.zk.tryGetData(path);
        if (node === undefined) return undefined;
        try {
          return parseItemFailure(path, decodeValue(path, node.data));
        } catch (error) {
          if (error instanceof MalformedNodeError) return undefined;
          throw error;
        }
      }),
    );
    return Object.fromEntries(
      read.flatMap((failure, index) =>
        failure === undefined ? [] : [[items[index] as string, failure]],
      ),
    );
  }

  /** Deletes the last failures of items no longer in the job's pool (the manager, each pass). */
  async pruneFailures(job: string, pool: ReadonlySet<string>, fence: WriteOptions): Promise<void> {
    const { failures } = jobNodes(this.parent, job);
    const items = (await this.zk.tryGetChildren(failures))?.children ?? [];
    await Promise.all(
      items
        .filter((item) => !pool.has(item))
        .map((item) => this.zk.deleteIfPresent(childPath(failures, item), -1, fence)),
    );
  }

  /** How many items have a last failure kept (one listing). */
  async failureCount(job: string): Promise<number> {
    return (
      (await this.zk.tryGetChildren(jobNodes(this.parent, job).failures))?.children.length ?? 0
    );
  }

  /** Deletes the job's history and its items' failures (when the job is removed). */
  async remove(job: string): Promise<void> {
    const { runs, failures } = jobNodes(this.parent, job);
    await this.zk.deleteRecursive(runs);
    await this.zk.deleteRecursive(failures);
  }
}

/** How many of a lapsed holder's newest runs a failover looks through for the ones holding its items. */
const INTERRUPTED_LOOKBACK = 10;
/** How long a run's record is kept, whatever the job's `keepRuns`, while it has not ended. */
export const UNFINISHED_KEPT_MS = 10 * 60_000;

function parseItemFailure(path: string, value: unknown): JobItemFailure {
  const failure = value as Partial<JobItemFailure> | null;
  if (
    typeof failure !== 'object' ||
    failure === null ||
    typeof failure.run !== 'string' ||
    typeof failure.worker !== 'string' ||
    !Number.isSafeInteger(failure.token) ||
    !Number.isSafeInteger(failure.attempt) ||
    typeof failure.finishedAt !== 'string' ||
    typeof failure.error?.message !== 'string' ||
    typeof failure.error.type !== 'string'
  )
    throw new MalformedNodeError(path, 'not a job item failure: delete it, it is only history');
  return failure as JobItemFailure;
}
