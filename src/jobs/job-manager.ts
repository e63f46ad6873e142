/**
 * The manager of a jobs' parent: whichever job worker leads the latch (leader-latch.ts). Each pass
 * it reads the live workers, the job definitions and the current assignment, decides the new one
 * (assignment.ts, pure) and writes it in one versioned set, fenced by its latch session: a manager
 * that dies part-way leaves the old assignment or the new one, never a mix, and the next manager
 * decides again from what it reads. It also deletes the leases of items no longer in their pool
 * once those are released or have run out (whether their holder still lives or not), and the flags
 * of disabled workers gone for good (`GONE_WORKER_FLAG_GRACE_MS`).
 */
import { MalformedNodeError } from '../errors/task-errors.js';
import type { ZkSession } from '../zk/zk-client-types.js';
import type { Zk } from '../zk/zk.js';
import {
  ASSIGNMENT_BUDGET_BYTES,
  decideAssignment,
  fitAssignment,
  sameAssignment,
} from './assignment.js';
import { poolItems, type StoredJob } from './job-definition.js';
import type { AssignmentRecord, JobStore, JobWorkerInfo } from './job-store.js';
import { ArmedWatches } from '../zk/recipes/armed-watches.js';
import { LeaderLatch } from '../zk/recipes/leader-latch.js';
import { effectiveLease, type LeaseTiming } from './lease.js';
import { assignmentMoves, type StrategyRegistry } from './strategies.js';

/**
 * How long the manager keeps the flag of a disabled job worker that has no live node before it
 * deletes it. Ids are unique per start, so a worker gone this long has stopped for good; one whose
 * session expired registers again under its id as soon as it reaches ZooKeeper, and stays disabled
 * if that is within this time.
 */
export const GONE_WORKER_FLAG_GRACE_MS = 10 * 60_000;

export interface ManagerRuntime {
  readonly zk: Zk;
  readonly store: JobStore;
  readonly strategies: StrategyRegistry;
  readonly id: string;
  readonly timing: LeaseTiming;
  /** How long a disabled worker's flag outlives the worker's node (GONE_WORKER_FLAG_GRACE_MS; shorter in tests). */
  readonly goneWorkerFlagGraceMs: number;
  /** Wall clock (ms). */
  now(): number;
  /** Something the manager watches changed: run a pass. */
  changed(): void;
  /** A new assignment was written: its epoch and how many items changed holder. */
  onRebalance(epoch: number, moved: number, assignment: AssignmentRecord): void;
  onError(error: unknown, job?: string): void;
}

export class JobManager {
  private readonly latch: LeaderLatch;
  private leading = false;

  private readonly watches: ArmedWatches;
  /** The flags of disabled workers as last read; read again only once the watch set with that read has fired. */
  private disabledFlags: readonly string[] = [];
  /** Flags of disabled workers that have no live node, and since when this manager has seen them so (its wall clock). */
  private readonly flagWithoutWorkerSince = new Map<string, number>();

  constructor(private readonly runtime: ManagerRuntime) {
    this.latch = new LeaderLatch(runtime.zk, runtime.store.nodes.manager, runtime.changed);
    this.watches = new ArmedWatches(() => runtime.changed());
  }

  /** True when this worker led at its last pass. */
  get isLeader(): boolean {
    return this.leading;
  }

  async pass(): Promise<void> {
    const session = await this.latch.lead();
    this.leading = session !== undefined;
    if (session === undefined) {
      this.flagWithoutWorkerSince.clear(); // not watching meanwhile: a worker may have come and gone unseen
      return;
    }
    const { store, strategies } = this.runtime;
    const [names, workers, disabled, current] = await Promise.all([
      store.names(this.watches.watch('names')),
      store.workers(this.watches.watch('workers')),
      this.readDisabledFlags(),
      this.readCurrent(),
    ]);
    const jobs: StoredJob[] = [];
    for (const name of names) {
      try {
        const read = await store.read(name, this.watches.watch(`job:${name}`));
        if (read !== undefined) jobs.push(read.job);
        else this.watches.forget(`job:${name}`); // removed meanwhile: no watch was set
      } catch (error) {
        if (!(error instanceof MalformedNodeError)) throw error;
        this.runtime.onError(error, name); // left unassigned until defined again
      }
    }
    const decision = fitAssignment(
      decideAssignment(jobs, workers, current?.record, strategies, new Set(disabled)),
      ASSIGNMENT_BUDGET_BYTES,
    );
    if (current?.record === undefined || !sameAssignment(current.record, decision)) {
      const record: AssignmentRecord = {
        epoch: (current?.record?.epoch ?? current?.version ?? 0) + 1,
        jobs: decision.jobs,
        problems: decision.problems,
        manager: this.runtime.id,
        writtenAt: new Date(this.runtime.now()).toISOString(),
      };
      if (await store.writeAssignment(record, current?.version, { fence: session })) {
        const moved = Object.keys(decision.jobs).reduce(
          (sum, job) =>
            sum + assignmentMoves(current?.record?.jobs[job] ?? {}, decision.jobs[job] ?? {}).moved,
          0,
        );
        this.runtime.onRebalance(record.epoch, moved, record);
      } else this.runtime.changed(); // another manager's write came first: decide again from it
    }
    await this.pruneLeases(jobs, session);
    await this.pruneFlagsOfGoneWorkers(disabled, workers, session);
  }

  /**
   * The ids flagged disabled. They change only by an operator's call (or this manager's prune), so
   * they are read when the watch set with the last read has fired (a change, a lost connection or
   * session), not at every pass.
   */
  private async readDisabledFlags(): Promise<readonly string[]> {
    const watcher = this.watches.watch('disabled');
    if (watcher === undefined) return this.disabledFlags; // the last read's watch is armed: nothing changed since
    try {
      this.disabledFlags = await this.runtime.store.disabledWorkers(watcher);
    } catch (error) {
      this.watches.forget('disabled'); // perhaps no watch was set: read again at the next pass
      throw error;
    }
    return this.disabledFlags;
  }

  /** The assignment written last; a malformed one (reported) is decided afresh and written over. */
  private async readCurrent(): Promise<
    { readonly record: AssignmentRecord | undefined; readonly version: number } | undefined
  > {
    const { store } = this.runtime;
    try {
      return await store.readAssignment();
    } catch (error) {
      if (!(error instanceof MalformedNodeError)) throw error;
      this.runtime.onError(error);
      const version = await store.assignmentVersion();
      return version === undefined ? undefined : { record: undefined, version };
    }
  }

  /** Leaves the election (a clean stop): the next candidate takes over at once. */
  async leave(): Promise<void> {
    this.leading = false;
    this.flagWithoutWorkerSince.clear();
    await this.latch.leave();
  }

  /**
   * Deletes the flag of a disabled worker once this manager has seen it without a live node for
   * `goneWorkerFlagGraceMs` (the worker stopped for good: ids are unique per start), so that flags
   * do not pile up as workers are disabled and then stopped. A flag whose name no worker could have
   * goes the same way.
   */
  private async pruneFlagsOfGoneWorkers(
    flags: readonly string[],
    workers: readonly JobWorkerInfo[],
    session: ZkSession,
  ): Promise<void> {
    const live = new Set(workers.map((worker) => worker.id));
    const flagged = new Set(flags);
    for (const id of [...this.flagWithoutWorkerSince.keys()])
      if (live.has(id) || !flagged.has(id)) this.flagWithoutWorkerSince.delete(id);
    const now = this.runtime.now();
    for (const id of flags) {
      if (live.has(id)) continue;
      const since = this.flagWithoutWorkerSince.get(id);
      if (since === undefined) this.flagWithoutWorkerSince.set(id, now);
      else if (now - since >= this.runtime.goneWorkerFlagGraceMs) {
        await this.runtime.store.enableWorker(id, { fence: session });
        this.flagWithoutWorkerSince.delete(id);
      }
    }
  }

  /**
   * Deletes leases of items that left their pool (or whose job is gone) once released or run out,
   * and the last failures of items that left their pool,
   * so that lease nodes do not pile up while items come and go. A holder may still have a write of
   * that lease in flight: sent again after a lost reply it checks the node is still the one it was
   * decided on (`WriteOptions.incarnation`), and one that lands on the next node all the same is told
   * apart by its token (lease.ts, `effectiveLease`), so neither a renewal nor a release of the old
   * node counts on the new one.
   */
  private async pruneLeases(jobs: readonly StoredJob[], session: ZkSession): Promise<void> {
    const { store, timing } = this.runtime;
    const pools = new Map(
      jobs.map((job) => [job.name, new Set(poolItems(job.workPool).map((item) => item.id))]),
    );
    for (const job of await store.leasedJobs()) {
      const pool = pools.get(job);
      const items = await store.leasedItems(job);
      let left = items.length;
      for (const item of items) {
        if (pool?.has(item) === true) continue;
        const lease = await store.readLease(job, item).catch(() => undefined);
        if (lease === undefined) continue;
        const effective = effectiveLease(lease.record, lease, timing);
        if (
          effective.released === true ||
          effective.expiresAt + timing.driftMs < this.runtime.now()
        ) {
          await store.deleteLease(job, item, lease, { fence: session });
          left -= 1;
        }
      }
      if (pool === undefined && left === 0) await store.deleteLeasesOf(job);
    }
    // Last failures of items that left their pool go too (a failure node per item, like a lease).
    for (const [job, pool] of pools) await store.runs.pruneFailures(job, pool, { fence: session });
  }
}
