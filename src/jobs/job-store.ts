/**
 * ZooKeeper I/O of jobs (the layout is in src/zk/layout.ts): definitions, the one assignment node,
 * the job workers' ephemeral nodes, the items' leases, and the flags of disabled job workers. Every
 * write is a create-if-absent, a versioned set or a delete, so each is safe to repeat. A versioned
 * set whose reply was lost is settled by reading the node back: it landed exactly when the node
 * holds the bytes written.
 */
import { MalformedNodeError } from '../errors/task-errors.js';
import { isZkError } from '../errors/zk-error.js';
import { decodeValue, encodeValue } from '../serialization/codec.js';
import { JOB_TRIGGER, RESERVED_PREFIX, childPath, jobNodes, jobsNodes } from '../zk/layout.js';
import type { ZkStat } from '../zk/native-client.js';
import type { Watcher, WriteOptions } from '../zk/zk-client-types.js';
import type { Zk } from '../zk/zk.js';
import { parseStoredJob, type StoredJob } from './job-definition.js';
import { JobRunStore } from './job-run-store.js';
import type { LeaseNode, LeaseRecord } from './lease.js';

/** The manager's answer for every job: item ids by worker id, and why a job could not be assigned. */
export interface AssignmentRecord {
  /** One more with every write. */
  readonly epoch: number;
  readonly jobs: Readonly<Record<string, Readonly<Record<string, readonly string[]>>>>;
  /** Jobs left as they were, and why (an unknown strategy, no worker with the function). */
  readonly problems: Readonly<Record<string, string>>;
  /** The manager that wrote it. */
  readonly manager: string;
  readonly writtenAt: string;
}

/**
 * A live job worker, as its ephemeral node tells it.
 *
 * @category Jobs
 */
export interface JobWorkerInfo {
  readonly id: string;
  readonly host: string;
  readonly pid: number;
  /** The job functions it registered: only jobs of these are assigned to it. */
  readonly jobFunctions: readonly string[];
  readonly leaseMs: number;
  readonly startedAt: string;
}

/**
 * What a disabled job worker's flag holds, for people reading the node: the flag is the node
 * itself, so its data is never read to decide anything.
 */
export interface DisabledWorkerRecord {
  readonly disabledAt: string;
  /** `<host>:<pid>` of the process that disabled it. */
  readonly by: string;
}

/** A node as read before a write decided on it: the version to write over, and the node it is (its creation zxid). */
export interface NodeRead {
  readonly version: number;
  readonly czxid: number;
}

/** A lease as read: its record, and the version, zxids and last change time of its node. */
export interface LeaseState extends LeaseNode {
  readonly record: LeaseRecord;
  readonly version: number;
}

/** The placeholder a lease node is created with: released, so the first holder takes it at once. */
const NO_HOLDER: LeaseRecord = { holder: '', token: 0, expiresAt: 0, released: true };

export class JobStore {
  readonly nodes: ReturnType<typeof jobsNodes>;
  /** The run history of the jobs under the same parent. */
  readonly runs: JobRunStore;

  constructor(
    private readonly zk: Zk,
    readonly parent: string,
  ) {
    this.nodes = jobsNodes(parent);
    this.runs = new JobRunStore(zk, parent);
  }

  /** The jobs' names, sorted; `watcher` fires once when one is defined or removed. */
  async names(watcher?: Watcher): Promise<string[]> {
    if (watcher !== undefined) await this.zk.ensurePath(this.parent); // a watch needs the node; a read alone creates nothing
    const listing = await this.zk.tryGetChildren(this.parent, watcher);
    return (listing?.children ?? []).filter((name) => !name.startsWith(RESERVED_PREFIX)).sort();
  }

  /** The job and its node as read; undefined when there is none. `watcher` fires once when it changes or goes. */
  async read(
    name: string,
    watcher?: Watcher,
  ): Promise<({ readonly job: StoredJob } & NodeRead) | undefined> {
    const { node } = jobNodes(this.parent, name);
    const read = await this.getData(node, watcher);
    return read === undefined
      ? undefined
      : {
          job: parseStoredJob(node, decodeValue(node, read.data)),
          version: read.stat.version,
          czxid: read.stat.czxid,
        };
  }

  /** The job's node as read, whatever it holds; undefined when there is none. */
  async node(name: string): Promise<NodeRead | undefined> {
    const stat = await this.zk.exists(jobNodes(this.parent, name).node);
    return stat === undefined ? undefined : { version: stat.version, czxid: stat.czxid };
  }

  /**
   * Creates the job (`read` undefined; false when it exists by then) or replaces the node read
   * (false when it changed, or was removed and perhaps defined again, since).
   */
  async write(job: StoredJob, read: NodeRead | undefined): Promise<boolean> {
    const { node } = jobNodes(this.parent, job.name);
    const data = encodeValue(job, `job "${job.name}"`, node);
    if (read === undefined) {
      await this.zk.ensurePath(this.parent);
      return this.zk.createIfAbsent(node, data, 'persistent');
    }
    try {
      await this.zk.setData(node, data, read.version, { incarnation: read.czxid });
      return true;
    } catch (error) {
      if (isZkError(error, 'BAD_VERSION', 'NO_NODE', 'NODE_REPLACED')) return false;
      throw error;
    }
  }

  async remove(name: string): Promise<void> {
    await this.zk.deleteRecursive(jobNodes(this.parent, name).node);
  }

  /** Asks the job's workers for a run now: the trigger node's version goes up. */
  async trigger(name: string): Promise<void> {
    const { trigger } = jobNodes(this.parent, name);
    const data = encodeValue({ at: new Date().toISOString() }, 'job trigger');
    if (!(await this.zk.createIfAbsent(trigger, data, 'persistent')))
      await this.zk.setData(trigger, data, -1);
  }

  /**
   * How many times the job was triggered (the trigger node's writes), with `watcher` set to fire at
   * the next; undefined when the job is gone, and then no watch is set. The watch is always on a
   * node that exists (the trigger node, or before the first trigger the job's node, whose children
   * it watches), so it fires at the latest when the job is removed: an exists watch on a trigger
   * node that never appears would stay until the session ends.
   */
  async triggers(name: string, watcher?: Watcher): Promise<number | undefined> {
    const { node, trigger } = jobNodes(this.parent, name);
    const triggered = await this.getData(trigger, watcher);
    if (triggered !== undefined) return triggered.stat.version + 1;
    if (watcher === undefined) return 0;
    const listing = await this.zk.tryGetChildren(node, watcher);
    if (listing === undefined) return undefined;
    // Triggered between the two reads: the next trigger is a write to that node, so watch it too.
    if (listing.children.includes(JOB_TRIGGER)) return this.triggers(name, watcher);
    return 0;
  }

  /** The assignment and its node's version; undefined before the first manager wrote one. */
  async readAssignment(
    watcher?: Watcher,
  ): Promise<{ readonly record: AssignmentRecord; readonly version: number } | undefined> {
    const path = this.nodes.assignment;
    const read = await this.getData(path, watcher);
    if (read === undefined) {
      // Not written yet: a watch that sees it appear (it will, once a manager is elected), unless it appeared meanwhile.
      if (watcher !== undefined && (await this.zk.exists(path, watcher)) !== undefined)
        return this.readAssignment();
      return undefined;
    }
    return {
      record: parseAssignment(path, decodeValue(path, read.data)),
      version: read.stat.version,
    };
  }

  /** The assignment node's version, whatever it holds; undefined before the first write. */
  async assignmentVersion(): Promise<number | undefined> {
    return (await this.zk.exists(this.nodes.assignment))?.version;
  }

  /** Writes the assignment over the version read (`undefined`: creates it); false when another write came first. */
  async writeAssignment(
    record: AssignmentRecord,
    version: number | undefined,
    fence: WriteOptions,
  ): Promise<boolean> {
    const path = this.nodes.assignment;
    const data = encodeValue(record, 'job assignment', path);
    if (version === undefined) return this.zk.createIfAbsent(path, data, 'persistent', fence);
    return (await this.setIfVersion(path, data, version, fence)) !== undefined;
  }

  /** Registers this job worker for as long as `fence`'s session lives. */
  async register(info: JobWorkerInfo, fence: WriteOptions): Promise<void> {
    await this.zk.ensurePath(this.nodes.workers);
    await this.zk.createIfAbsent(
      childPath(this.nodes.workers, info.id),
      encodeValue(info, 'job worker'),
      'ephemeral',
      fence,
    );
  }

  async unregister(id: string): Promise<void> {
    await this.zk.deleteIfPresent(childPath(this.nodes.workers, id));
  }

  /** The live job workers, by id; `watcher` fires once when one comes or goes. A node that cannot be read is left out. */
  async workers(watcher?: Watcher): Promise<JobWorkerInfo[]> {
    if (watcher !== undefined) await this.zk.ensurePath(this.nodes.workers);
    const listing = await this.zk.tryGetChildren(this.nodes.workers, watcher);
    const names = [...(listing?.children ?? [])].sort();
    const read = await Promise.all(
      names.map((name) => this.getData(childPath(this.nodes.workers, name)).catch(() => undefined)),
    );
    return read.flatMap((node, index) => {
      const info =
        node === undefined
          ? undefined
          : (safeDecode(node.data) as Partial<JobWorkerInfo> | undefined);
      if (info === undefined || info.id !== names[index] || !Array.isArray(info.jobFunctions))
        return [];
      return [info as JobWorkerInfo];
    });
  }

  /** Whether a job worker of that id has its node now (registered, on a session that lives). */
  async isWorkerLive(id: string): Promise<boolean> {
    return (await this.zk.exists(childPath(this.nodes.workers, id))) !== undefined;
  }

  /**
   * The ids flagged disabled, sorted; `watcher`, when given, is always set, and fires once when a
   * flag is added or deleted. Only the names count: a flag whose data is malformed disables its
   * worker all the same.
   */
  async disabledWorkers(watcher?: Watcher): Promise<string[]> {
    const path = this.nodes.disabledWorkers;
    if (watcher !== undefined) await this.zk.ensurePath(path); // a watch of children needs the node
    const listing = await this.zk.tryGetChildren(path, watcher);
    // Deleted meanwhile (by hand): no watch was set, so watch for it to be made again, unless it was.
    if (listing === undefined && watcher !== undefined && (await this.zk.exists(path, watcher)))
      return this.disabledWorkers();
    return [...(listing?.children ?? [])].sort();
  }

  /** Whether the job worker is flagged disabled (whether it lives or not). */
  async isWorkerDisabled(id: string): Promise<boolean> {
    return (await this.zk.exists(childPath(this.nodes.disabledWorkers, id))) !== undefined;
  }

  /** Flags the job worker disabled; false when it already was. */
  async disableWorker(id: string, record: DisabledWorkerRecord): Promise<boolean> {
    const path = childPath(this.nodes.disabledWorkers, id);
    await this.zk.ensurePath(this.nodes.disabledWorkers);
    return this.zk.createIfAbsent(
      path,
      encodeValue(record, 'disabled job worker', path),
      'persistent',
    );
  }

  /** Deletes the job worker's flag (the manager's prune fenced by its latch session); false when it had none. */
  async enableWorker(id: string, fence: WriteOptions = {}): Promise<boolean> {
    return this.zk.deleteIfPresent(childPath(this.nodes.disabledWorkers, id), -1, fence);
  }

  /** An item's lease; undefined when it has none yet. `watcher` fires once when it changes. */
  async readLease(job: string, item: string, watcher?: Watcher): Promise<LeaseState | undefined> {
    const path = this.leasePath(job, item);
    const read = await this.getData(path, watcher);
    return read === undefined
      ? undefined
      : leaseState(parseLease(path, decodeValue(path, read.data)), read.stat);
  }

  /** Creates the item's lease node, released, if it has none (so every takeover is a versioned set); the lease as it then is. */
  async ensureLease(job: string, item: string, fence: WriteOptions): Promise<LeaseState> {
    const path = this.leasePath(job, item);
    await this.zk.ensurePath(jobNodes(this.parent, job).leases);
    await this.zk.createIfAbsent(path, encodeValue(NO_HOLDER, 'lease'), 'persistent', fence);
    const lease = await this.readLease(job, item);
    if (lease === undefined)
      throw new MalformedNodeError(
        path,
        'deleted right after it was created (the job was removed)',
      );
    return lease;
  }

  /**
   * Writes `record` over the version read of the lease node `read` (fenced as `fence` says); the new
   * state, or undefined when another write came first, or the node was deleted (and perhaps created
   * again) since it was read: then the record did not take on the node it was meant for.
   */
  async writeLease(
    job: string,
    item: string,
    record: LeaseRecord,
    read: { readonly version: number; readonly czxid: number },
    fence: WriteOptions,
  ): Promise<LeaseState | undefined> {
    const path = this.leasePath(job, item);
    const stat = await this.setIfVersion(path, encodeValue(record, 'lease', path), read.version, {
      ...fence,
      incarnation: read.czxid,
    });
    return stat === undefined ? undefined : leaseState(record, stat);
  }

  /** The jobs that have lease nodes (defined or not). */
  async leasedJobs(): Promise<string[]> {
    return ((await this.zk.tryGetChildren(this.nodes.leases))?.children ?? []).sort();
  }

  /** Deletes a job's (empty) leases node once its last lease is pruned. */
  async deleteLeasesOf(job: string): Promise<void> {
    try {
      await this.zk.delete(jobNodes(this.parent, job).leases, -1);
    } catch (error) {
      if (!isZkError(error, 'NO_NODE', 'NOT_EMPTY')) throw error;
    }
  }

  /** The items that have a lease node. */
  async leasedItems(job: string): Promise<string[]> {
    return (
      (await this.zk.tryGetChildren(jobNodes(this.parent, job).leases))?.children ?? []
    ).sort();
  }

  /** Deletes a lease node if it is still the node and version read (a resend after a lost reply never reaches a node created again since). */
  async deleteLease(
    job: string,
    item: string,
    read: { readonly version: number; readonly czxid: number },
    fence: WriteOptions,
  ): Promise<void> {
    try {
      await this.zk.delete(this.leasePath(job, item), read.version, {
        ...fence,
        incarnation: read.czxid,
      });
    } catch (error) {
      if (!isZkError(error, 'BAD_VERSION', 'NO_NODE', 'NOT_EMPTY')) throw error;
    }
  }

  leasePath(job: string, item: string): string {
    return childPath(jobNodes(this.parent, job).leases, item);
  }

  /**
   * A versioned set; after a lost reply (or its resend answered BAD_VERSION), landed exactly when the
   * node, the one it was meant for when `options.incarnation` is given, holds `data` (read after a
   * sync: the server may not have applied the first try yet). Undefined when it did not land there.
   */
  private async setIfVersion(
    path: string,
    data: Buffer,
    version: number,
    options: WriteOptions,
  ): Promise<ZkStat | undefined> {
    try {
      return await this.zk.setData(path, data, version, options);
    } catch (error) {
      if (isZkError(error, 'NO_NODE', 'NODE_REPLACED')) return undefined;
      if (!isZkError(error, 'BAD_VERSION', 'CONNECTION_LOSS')) throw error;
      await this.zk.sync(path);
      const now = await this.getData(path);
      const sameNode = options.incarnation === undefined || now?.stat.czxid === options.incarnation;
      return now !== undefined && sameNode && now.data !== null && now.data.equals(data)
        ? now.stat
        : undefined;
    }
  }

  private async getData(
    path: string,
    watcher?: Watcher,
  ): Promise<{ stat: ZkStat; data: Buffer | null } | undefined> {
    try {
      return await this.zk.getData(path, watcher);
    } catch (error) {
      if (isZkError(error, 'NO_NODE')) return undefined;
      throw error;
    }
  }
}

function leaseState(record: LeaseRecord, stat: ZkStat): LeaseState {
  return {
    record,
    version: stat.version,
    czxid: stat.czxid,
    mzxid: stat.mzxid,
    mtime: stat.mtime.getTime(),
  };
}

function safeDecode(data: Buffer | null): unknown {
  try {
    return decodeValue('', data);
  } catch {
    return undefined;
  }
}

function parseLease(path: string, value: unknown): LeaseRecord {
  const lease = value as Partial<LeaseRecord> | null;
  if (
    typeof lease !== 'object' ||
    lease === null ||
    typeof lease.holder !== 'string' ||
    !Number.isSafeInteger(lease.token) ||
    typeof lease.expiresAt !== 'number' ||
    (lease.released !== undefined && typeof lease.released !== 'boolean')
  )
    throw new MalformedNodeError(
      path,
      'not a lease { holder, token, expiresAt, released? }: delete it (the item is then free at once)',
    );
  return lease as LeaseRecord;
}

function parseAssignment(path: string, value: unknown): AssignmentRecord {
  const record = value as Partial<AssignmentRecord> | null;
  if (
    typeof record !== 'object' ||
    record === null ||
    !Number.isSafeInteger(record.epoch) ||
    typeof record.jobs !== 'object' ||
    record.jobs === null
  )
    throw new MalformedNodeError(
      path,
      'not a job assignment { epoch, jobs, … }: delete it and the manager writes it again',
    );
  return { problems: {}, manager: '', writtenAt: '', ...record } as AssignmentRecord;
}
