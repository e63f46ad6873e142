import { MalformedNodeError, OwnershipLostError } from '../errors/task-errors.js';
import { ResultTooLargeError } from '../errors/value-errors.js';
import { isZkError } from '../errors/zk-error.js';
import type { TaskDefinition } from '../exec/task-spec.js';
import { decodeValue, encodeValue } from '../serialization/codec.js';
import type { AttemptRecord, TaskFailure } from './failure-policy.js';
import { encodeHistoryRecord, type TaskHistoryRecord } from './task-history.js';
import { type WaitingRecord } from './waiting-record.js';
import {
  WAITING,
  ATTEMPTS,
  CONTINUATION_LINK,
  DEP_PREFIX,
  FAILED,
  OWNER,
  PROV_PREFIX,
  READY,
  RESULT,
  argPathForDep,
  childPath,
  hasSequentialName,
  keptResultPathFor,
  parentOf,
  historyEntryFor,
  runnableEntryFor,
  builderNodeName,
  batchMarkerName,
  keyClaimPath,
  TASK_KEYS,
  TASK_PREFIX,
  isContinuedSerial,
  nameOf,
  serialOf,
} from '../zk/layout.js';
import { classifyTask } from './task-state.js';
import { DEFAULTS } from '../config/defaults.js';
import type { Zk } from '../zk/zk.js';
import { TaskReader, type MarkerRead, type OwnerRecord, type TaskListing } from './task-reader.js';

import type { WriteOptions, ZkSession } from '../zk/zk-client-types.js';
import {
  PredictedListings,
  prefetchedNames,
  settledRead,
  PrefetchError,
  type PrefetchedInputs,
} from './claim-prefetch.js';
import type { ZkStat } from '../zk/native-client.js';
import { deleteValue, isStoredPlain, writeValue, writeValueIfAbsent } from '../zk/chunked-value.js';

/** A task this worker owns: it created the task's ephemeral `owner` node in `session`. */
export interface Claim {
  readonly task: string;
  readonly plan: string;
  readonly workerId: string;
  readonly session: ZkSession;
  /** Aborted when the claim must not write any more (the worker gave up on it); also the task function's signal. */
  readonly signal: AbortSignal;
  /** The task's children and definition, read right behind the claim (same round trip). */
  readonly prefetched?: Promise<
    [TaskListing | undefined, TaskDefinition | undefined | PrefetchError]
  >;
  /** Its ACL check and, when this process handed it its last input, its inputs and links, read in the same round trip. */
  readonly prefetchedInputs?: PrefetchedInputs;
  /** Where the claim stands in this process: a claim given back writes nothing more; one finishing is not given back. */
  readonly progress: ClaimProgress;
}

/** `running`: the function may still run; `finishing`: its result is being stored and handed on; `released`: given back. */
export interface ClaimProgress {
  phase: 'running' | 'finishing' | 'released';
  /**
   * The task's `ctx.spawn` calls still writing. The claim is given back only once they settled: a
   * worker that takes the task next must find each call's batch committed or given up, never
   * still being written by a live session (src/spawn/task-spawner.ts).
   */
  spawning?: Set<Promise<unknown>>;
  /** The continuation its function handed over to (ctx.continueWith), once made. */
  continuedBy?: string;
  /** When its function said "not yet" (ctx.notYet): the time to run it again, and why it waits. */
  checkAgainAt?: Date;
  waitingFor?: string;
  /** Why it completed as skipped (its function's `skip(reason)`, or its trigger rule), once it did. */
  skipped?: string;
  /** Tasks its function's ctx.spawn and ctx.continueWith calls resolved in this try. */
  spawned?: number;
  /** When this try's function started: kept with the try if it fails (src/store/task-tries.ts). */
  tryStartedAt?: Date;
}

/** How `finish` completes a task. */
export interface FinishPlan {
  readonly keepResult: boolean;
  /** Store the result too (not stored yet), refusing it beyond this many bytes. */
  readonly storeMaxBytes?: number;
  /** Links already read (prov name → dep path): handed on without reading them again. */
  readonly links?: ReadonlyMap<string, string>;
  /** Told of dependents made runnable as soon as they are, before the task is deleted. */
  readonly onRunnable?: (tasks: readonly string[]) => void;
  /** The record to keep in the plan's history (plans that keep one: the default). */
  readonly history?: TaskHistoryRecord;
  /** The result was stored by a previous owner, who may have fed some dependents already (see giveInput). */
  readonly refeed?: boolean;
}

/** How `deleteTask` goes about it. */
export interface DeleteTaskOptions {
  /** prov-* children whose dependents were already handed the result. */
  readonly propagated?: ReadonlySet<string>;
  /** Told of dependents made runnable while the task is deleted (a late prov-*). */
  readonly onRunnable?: (tasks: readonly string[]) => void;
  /** The result was stored by a previous owner, who may have fed some dependents already (see giveInput). */
  readonly refeed?: boolean;
  /** The task's listing, sent by the caller with its last writes; listed again if that read failed. */
  readonly listed?: Promise<TaskChildren | undefined | PrefetchError>;
}

type TaskChildren = { children: string[]; stat: ZkStat };

const MAX_DELETE_ROUNDS = 10;

/** Throws the reason of the first rejected request, in the order they were sent. */
function throwFirstRefusal(outcomes: readonly PromiseSettledResult<unknown>[]): void {
  const refused = outcomes.find((outcome) => outcome.status === 'rejected');
  if (refused !== undefined) throw refused.reason;
}

/**
 * Every ZooKeeper write a worker makes on plans and tasks; its reads are `reads`, a TaskReader on
 * the same client. Writes made on behalf of a claim are fenced by the claim's session: if that
 * session expired (and its owner node with it), they fail instead of landing through a newer
 * session.
 */
export class TaskStore {
  /** The reads of plans and tasks, on the same client and with the same value limit. */
  readonly reads: TaskReader;
  /** Listings of dependents this process made runnable, for their claims' prefetch. */
  private readonly predicted = new PredictedListings();

  /**
   * @param valueLimit The largest stored value (encoded bytes) read back when no other limit is
   * given (see TaskReader).
   */
  constructor(
    private readonly zk: Zk,
    readonly valueLimit: number = DEFAULTS.maxResultBytes,
  ) {
    this.reads = new TaskReader(zk, valueLimit);
  }

  /** Records a failed try under the claim (creates or replaces `attempts`). */
  async writeAttempts(claim: Claim, record: AttemptRecord): Promise<void> {
    const path = childPath(claim.task, ATTEMPTS);
    const encoded = encodeValue(record, 'attempt record', path);
    if (!(await this.zk.createIfAbsent(path, encoded, 'persistent', this.fence(claim)))) {
      await this.zk.setData(path, encoded, -1, this.fence(claim));
    }
  }

  /** Records a "not yet" of the task's function under the claim (creates or replaces `waiting`). */
  async writeWaiting(claim: Claim, record: WaitingRecord): Promise<void> {
    const path = childPath(claim.task, WAITING);
    const encoded = encodeValue(record, 'waiting record', path);
    if (!(await this.zk.createIfAbsent(path, encoded, 'persistent', this.fence(claim)))) {
      await this.zk.setData(path, encoded, -1, this.fence(claim));
    }
  }

  /**
   * Fails the task for good: `failed` under the task (it is never taken again), then the plan's
   * `failed` marker, then a touch of the plan node that wakes every process watching the plan. A
   * crash in between leaves a failed task without the marker: the next full scan writes it.
   */
  async markFailed(claim: Claim, failure: TaskFailure): Promise<void> {
    await this.zk.createIfAbsent(
      childPath(claim.task, FAILED),
      encodeValue(failure, 'task failure'),
      'persistent',
      this.fence(claim),
    );
    await this.unmarkRunnable(claim.task, this.fence(claim));
    await this.markPlanFailed(claim.plan, claim.task, failure.at, this.fence(claim));
  }

  /** Writes (or rewrites: its data watch tells waiters that another task failed) the plan's `failed` marker, then touches the plan. */
  async markPlanFailed(
    plan: string,
    task: string,
    at: Date,
    options: WriteOptions = {},
  ): Promise<void> {
    const marker = encodeValue({ task, at }, 'plan failure');
    if (!(await this.zk.createIfAbsent(childPath(plan, FAILED), marker, 'persistent', options))) {
      await this.zk.setData(childPath(plan, FAILED), marker, -1, options);
    }
    await this.touchPlan(plan, options);
  }

  /**
   * Removes the plan's `failed` marker if it is still the one read (the same node, at the same
   * version: a failure written meanwhile rewrites it, or makes it again, and so survives), then
   * touches the plan.
   */
  async clearPlanFailed(plan: string, marker: MarkerRead): Promise<boolean> {
    try {
      await this.zk.delete(childPath(plan, FAILED), marker.version, { incarnation: marker.czxid });
    } catch (error) {
      if (isZkError(error, 'NO_NODE', 'BAD_VERSION')) return false;
      throw error;
    }
    await this.touchPlan(plan);
    return true;
  }

  /**
   * Rewrites the plan node's value unchanged: a data change that fires the data watch every
   * worker process keeps on the plan, so a change of the plan's state (ready, failed, retried)
   * reaches them in one round trip. A plan that is gone is left alone.
   */
  async touchPlan(plan: string, options: WriteOptions = {}): Promise<void> {
    for (;;) {
      const node = await this.zk.tryGetData(plan);
      if (node === undefined) return;
      try {
        // The value read goes back to the node it was read from, never to a plan made again at that path.
        await this.zk.setData(plan, node.data, node.stat.version, {
          ...options,
          incarnation: node.stat.czxid,
        });
        return;
      } catch (error) {
        if (isZkError(error, 'NO_NODE', 'NODE_REPLACED')) return;
        if (!isZkError(error, 'BAD_VERSION')) throw error; // changed meanwhile: touch it again
      }
    }
  }

  /**
   * Deletes what is left of a task whose deletion stopped half-way (see `classifyTask`: no
   * children, or only late prov-* nodes); a no-op if it changed meanwhile into anything else.
   */
  async deleteAbandonedTask(task: string): Promise<void> {
    const listing = await this.zk.tryGetChildren(task);
    if (
      listing === undefined ||
      classifyTask(listing.children, listing.stat.cversion) !== 'abandoned'
    )
      return;
    await Promise.all(
      listing.children.map((name) => this.zk.deleteIfPresent(childPath(task, name))),
    );
    try {
      await this.zk.delete(task, -1);
    } catch (error) {
      if (!isZkError(error, 'NO_NODE', 'NOT_EMPTY')) throw error;
    }
  }

  /**
   * Settles a task that is not ready and whose builder is gone: its definition names the session
   * that added it, whose ephemeral `builder-<session>` node is not among `planChildren` (listed
   * before the task was looked at). If its batch was committed (its `batch-<id>` marker is there),
   * every link is in place: the task is made ready, as its builder would have. Otherwise nothing
   * will ever make it ready: it is deleted. The builder's writes are fenced by its session, so none
   * of them can land afterwards. Resolves what was done, or undefined when the task was left alone.
   */
  async settleOrphan(
    task: string,
    planChildren: readonly string[],
  ): Promise<'completed' | 'deleted' | undefined> {
    const stamp = await this.reads.readStamp(task);
    if (stamp === undefined || planChildren.includes(builderNodeName(stamp.builder)))
      return undefined;
    const listing = await this.zk.tryGetChildren(task);
    if (listing === undefined || listing.children.includes(READY)) return undefined;
    if (planChildren.includes(batchMarkerName(stamp.batch))) {
      await this.makeReady(task);
      const after = await this.reads.inspectTask(task);
      if (after !== undefined && classifyTask(after.children, after.childVersion) === 'runnable')
        await this.markRunnable(task);
      return 'completed';
    }
    // Its key goes first: a crash in between leaves the task, which the next look deletes; the other
    // way round would leave a claim naming a task that never ran, and the key taken for ever.
    if (stamp.key !== undefined && planChildren.includes(TASK_KEYS))
      await this.releaseKeyClaim(parentOf(task), stamp.key, task);
    await this.deleteUncommitted(task);
    return 'deleted';
  }

  /**
   * Deletes a task of a batch that never committed and never will. A continuation's link input
   * (the `dep-<continued serial>` of the task it was to continue) goes first: nothing else would
   * ever feed or remove it, and that task would wait for it for ever. The link names the input,
   * and is created before it, so a crash at any point leaves something the next call finishes.
   */
  async deleteUncommitted(task: string): Promise<void> {
    const input = await this.continuedInputOf(task);
    if (input !== undefined) {
      await this.zk.deleteIfPresent(input);
      await this.reindexIfRunnable(parentOf(input));
    }
    await this.zk.deleteRecursive(task);
  }

  /**
   * Makes a runnable task's index entry again (deleted, then created): its entry may have been
   * there all along, looked at and passed over while the task waited, and a new entry is what
   * every process's watch on the index reports.
   */
  private async reindexIfRunnable(task: string): Promise<void> {
    const listing = await this.reads.inspectTask(task);
    if (
      listing === undefined ||
      classifyTask(listing.children, listing.childVersion) !== 'runnable'
    )
      return;
    await this.unmarkRunnable(task);
    await this.markRunnable(task);
  }

  /** The input a continuation's link names, if it is one a hand-over makes: a continued serial's dep of a task of the same plan. */
  private async continuedInputOf(task: string): Promise<string | undefined> {
    const link = childPath(task, CONTINUATION_LINK);
    const node = await this.zk.tryGetData(link);
    if (node === undefined) return undefined;
    let dep: unknown;
    try {
      dep = decodeValue(link, node.data);
    } catch {
      return undefined; // not one zk-plan wrote: it names nothing to delete
    }
    if (typeof dep !== 'string') return undefined;
    const continued = parentOf(dep);
    const wellFormed =
      hasSequentialName(nameOf(continued), TASK_PREFIX) &&
      childPath(parentOf(task), nameOf(continued)) === continued &&
      isContinuedSerial(serialOf(nameOf(dep), DEP_PREFIX));
    return wellFormed ? dep : undefined;
  }

  /**
   * Frees `key` if its claim names `task` (a task of an unfinished batch being deleted): deleted as
   * read, so that a resend never takes a claim another task made since.
   */
  async releaseKeyClaim(plan: string, key: string, task: string): Promise<void> {
    let claim: Awaited<ReturnType<TaskReader['readKeyClaim']>>;
    try {
      claim = await this.reads.readKeyClaim(plan, key);
    } catch (error) {
      if (error instanceof MalformedNodeError) return; // not one zk-plan wrote: it names no task of ours
      throw error;
    }
    if (claim?.task !== task) return;
    try {
      await this.zk.delete(keyClaimPath(plan, key), claim.node.version, {
        incarnation: claim.node.czxid,
      });
    } catch (error) {
      if (!isZkError(error, 'NO_NODE', 'BAD_VERSION')) throw error; // gone already
    }
  }

  /**
   * Creates the task's `ready` unless it is there. Sent again after a lost reply only while the task
   * is still being built: once it was made ready, ran and finished, its `ready` is deleted, and a
   * second one would make the rest of it runnable (and run) again.
   */
  async makeReady(task: string, options: WriteOptions = {}): Promise<boolean> {
    return this.zk.createIfAbsent(childPath(task, READY), null, 'persistent', {
      ...options,
      stillWanted: () => this.stillBuilding(task),
    });
  }

  /** True while the task is being built: not ready, and nothing says it was made ready (and ran) since. */
  private async stillBuilding(task: string): Promise<boolean> {
    const listing = await this.reads.inspectTask(task);
    return (
      listing !== undefined && classifyTask(listing.children, listing.childVersion) === 'building'
    );
  }

  /** Tries to take the task by creating its ephemeral owner node; undefined when another worker has it or it is gone. */
  async claim(task: string, workerId: string, signal: AbortSignal): Promise<Claim | undefined> {
    const session = this.zk.session;
    const record: OwnerRecord = { workerId, claimedAt: new Date() };
    const creating = this.zk.create(
      childPath(task, OWNER),
      encodeValue(record, 'owner record'),
      'ephemeral',
      { fence: session },
    );
    // Sent behind the create, before its answer: they see the task as the claim left it.
    const prefetched = Promise.all([
      this.reads.inspectTask(task),
      settledRead(this.reads.readDefinition(task)),
    ]);
    prefetched.catch(() => undefined); // unused when the claim fails
    const prefetchedInputs = this.prefetchInputs(task);
    try {
      await creating;
    } catch (error) {
      if (isZkError(error, 'NODE_EXISTS') && error.retried) {
        // Our first try may have created it before the connection dropped: then the task is ours.
        // The server this session reads from may not have applied that try yet: sync first.
        await this.zk.sync(childPath(task, OWNER));
        const owner = await this.reads.readOwner(task);
        if (owner?.sessionId === session.id && owner.workerId === workerId)
          return {
            task,
            plan: parentOf(task),
            workerId,
            session,
            signal,
            progress: { phase: 'running' },
          };
      }
      if (isZkError(error, 'NODE_EXISTS', 'NO_NODE')) return undefined;
      throw error;
    }
    return {
      task,
      plan: parentOf(task),
      workerId,
      session,
      signal,
      prefetched,
      prefetchedInputs,
      progress: { phase: 'running' },
    };
  }

  /**
   * The reads sent behind a claim's create besides its listing and definition (see
   * PrefetchedInputs): the task's ACL always, its inputs and links when this process knows their
   * names. Every read is settled, so none is an unhandled rejection when the claim fails.
   */
  private prefetchInputs(task: string): PrefetchedInputs {
    const ownAcl = settledRead(this.zk.assertOwnAcl(task, 'the task'));
    const predicted = this.predicted.take(task);
    const { args, provs } = prefetchedNames(predicted ?? []);
    return {
      ownAcl,
      values: new Map(
        args.map((name) => [name, settledRead(this.reads.readStoredValue(childPath(task, name)))]),
      ),
      links: new Map(
        provs.map((name) => [name, settledRead(this.reads.readLink(childPath(task, name)))]),
      ),
    };
  }

  /** Gives the task back by deleting our owner node, if it is still ours; from now on the claim writes nothing. */
  async release(claim: Claim): Promise<void> {
    claim.progress.phase = 'released';
    // No spawn call starts from here on (they look at the phase); those under way settle first.
    if (claim.progress.spawning !== undefined)
      await Promise.allSettled([...claim.progress.spawning]);
    if (!this.zk.isCurrent(claim.session)) return; // the owner node went with the session
    const owner = await this.zk.tryGetData(childPath(claim.task, OWNER));
    if (owner === undefined || owner.stat.ephemeralOwner !== claim.session.id) return;
    const record = this.reads.decodeOwner(claim.task, owner.data);
    if (record?.workerId !== claim.workerId) return;
    try {
      // Named by its node: sent again after a lost reply, the delete never takes the owner node of a
      // claim made since, by another worker or by another loop of this very session.
      await this.zk.delete(childPath(claim.task, OWNER), owner.stat.version, {
        fence: claim.session,
        incarnation: owner.stat.czxid,
      });
    } catch (error) {
      if (!isZkError(error, 'NO_NODE', 'BAD_VERSION')) throw error;
    }
  }

  /**
   * Stores the result under the claim (in chunks when it is larger than a znode; ResultTooLargeError
   * beyond `maxBytes`). If a result is already there (a re-run after a crash), that one wins, so
   * every dependent sees the same value; returns the bytes that are stored.
   */
  async storeResult(claim: Claim, encoded: Buffer, maxBytes: number): Promise<Buffer> {
    const outcome = await writeValue(this.zk, childPath(claim.task, RESULT), encoded, {
      ...this.fence(claim),
      maxBytes,
    });
    if (outcome === 'created') return encoded;
    await this.zk.sync(childPath(claim.task, RESULT)); // it may be this session's own first try, whose reply was lost
    const existing = await this.reads.readEncodedResult(claim.task, maxBytes);
    if (existing === undefined)
      throw new OwnershipLostError(claim.task, 'its result vanished while this worker held it');
    return existing;
  }

  /** Removes a result whose write stopped half-way (the worker crashed), so the task can run again. */
  async discardResult(claim: Claim): Promise<void> {
    await deleteValue(this.zk, childPath(claim.task, RESULT), this.fence(claim));
  }

  /**
   * Completes a task whose result is stored: keeps the result if asked, removes `ready` (from
   * now on no worker can take the task to run it), hands the result to every dependent, and deletes
   * the task. Each step can be repeated after a crash at any point.
   */
  async finish(claim: Claim, encoded: Buffer, plan: FinishPlan): Promise<void> {
    const fence = this.fence(claim);
    claim.progress.phase = 'finishing'; // from here on the task is completed, not given back
    if (plan.storeMaxBytes !== undefined && encoded.length > plan.storeMaxBytes) {
      throw new ResultTooLargeError(
        encoded.length,
        plan.storeMaxBytes,
        childPath(claim.task, RESULT),
      ); // before anything is sent
    }
    // A chunked result (a large one, or a small one that looks like a chunk header) is stored in
    // full first: its chunks would otherwise land after the inputs handed on.
    const plain = isStoredPlain(encoded);
    if (plan.storeMaxBytes !== undefined && !plain)
      await this.storeResult(claim, encoded, plan.storeMaxBytes);
    // The rest is sent at once: the session applies requests in order, and after a crash a prefix of
    // them has been applied, so no input is handed on before the result is stored, nor `ready` removed.
    const storing =
      plan.storeMaxBytes !== undefined && plain
        ? this.storeResult(claim, encoded, plan.storeMaxBytes)
        : undefined;
    // The history record goes before `ready`: a task whose deletion has begun has its record, so a
    // worker that finishes what a dead one began (refeed) need not write it.
    const housekeeping = Promise.all([
      storing,
      plan.keepResult
        ? writeValueIfAbsent(this.zk, keptResultPathFor(claim.task), encoded, {
            ...fence,
            maxBytes: encoded.length,
          })
        : undefined,
      plan.history ? this.keepHistory(claim.task, plan.history, fence) : undefined,
      this.zk.deleteIfPresent(childPath(claim.task, READY), -1, fence),
    ]);
    const links = plan.links ?? new Map<string, string>();
    const feeding = Promise.all(
      [...links.values()].map((dep) => this.giveInput(dep, encoded, fence)),
    );
    // The task's own listing, for its deletion, travels with the writes above. The session answers
    // it after `ready` is gone: addTask records a dependency only on a task it sees ready, so no
    // prov-* is missed.
    const listed = settledRead(this.zk.tryGetChildren(claim.task));
    const [stored, , fed] = await Promise.all([storing, housekeeping, feeding]);
    if (stored !== undefined && !stored.equals(encoded))
      throw new OwnershipLostError(claim.task, 'another result was stored for it meanwhile');
    plan.onRunnable?.(fed.filter((task): task is string => task !== undefined));
    await this.deleteTask(claim, encoded, {
      propagated: new Set(links.keys()),
      onRunnable: plan.onRunnable,
      refeed: plan.refeed === true,
      listed,
    });
  }

  /**
   * Keeps the record of a task in its plan's history unless it has one (the first record wins);
   * false when the plan keeps no history (no `history` node) or is gone.
   */
  async keepHistory(
    task: string,
    record: TaskHistoryRecord,
    options: WriteOptions = {},
  ): Promise<boolean> {
    try {
      await this.zk.createIfAbsent(
        historyEntryFor(task),
        encodeHistoryRecord(record, historyEntryFor(task)),
        'persistent',
        options,
      );
      return true;
    } catch (error) {
      if (isZkError(error, 'NO_NODE')) return false;
      throw error;
    }
  }

  /** Removes a producer's link (`prov-N`) to a dependent's input that will never take its result (it took the producer's failure). */
  async unlink(prov: string, options: WriteOptions = {}): Promise<void> {
    await this.zk.deleteIfPresent(prov, -1, options);
  }

  /** Records the task in its plan's runnable index (plans without an index, e.g. written by other tools, are scanned instead). */
  async markRunnable(task: string, options: WriteOptions = {}): Promise<void> {
    try {
      await this.zk.createIfAbsent(runnableEntryFor(task), null, 'persistent', options);
    } catch (error) {
      if (!isZkError(error, 'NO_NODE')) throw error;
    }
  }

  /** Removes the task from its plan's runnable index (done, failed for good, or gone). */
  async unmarkRunnable(task: string, options: WriteOptions = {}): Promise<void> {
    await this.zk.deleteIfPresent(runnableEntryFor(task), -1, options);
  }

  /**
   * Writes the result as the dependent's arg-N and removes its dep-N: write first, so a crash never
   * loses the input. Resolves with the dependent when this made it runnable.
   */
  async propagate(
    prov: string,
    encoded: Buffer,
    options: WriteOptions = {},
    refeed = false,
  ): Promise<string | undefined> {
    const dep = await this.reads.readLink(prov);
    return dep === undefined ? undefined : await this.giveInput(dep, encoded, options, refeed);
  }

  /**
   * Satisfies one dep of a dependent: arg-N with the value (completing a half-written one), then
   * dep-N removed; then, if no dep is left, records the dependent as runnable. Of two producers
   * finishing together, the one whose delete comes last sees no dep left, so one of them does.
   *
   * `refeed`: a previous owner of the producer may have fed this dep already (it died while
   * finishing). Then a dep that is gone was fed, and its arg may even have been consumed by a
   * dependent that is being deleted: writing the arg again would leave a child in that dependent.
   * So the dep is looked for first (nobody else removes it while it is there), and a dependent whose
   * dep is gone is only indexed if it is runnable.
   */
  async giveInput(
    dep: string,
    encoded: Buffer,
    options: WriteOptions = {},
    refeed = false,
  ): Promise<string | undefined> {
    const dependent = parentOf(dep);
    let listing: TaskChildren | undefined;
    try {
      if (refeed && (await this.zk.exists(dep)) === undefined) {
        listing = await this.zk.tryGetChildren(dependent);
      } else if (isStoredPlain(encoded)) {
        // One round trip: the session keeps the order (arg, then dep removed, then the listing).
        // A chunked input (large, or header-like) is written in full before its dep goes.
        [, , listing] = await Promise.all([
          writeValueIfAbsent(this.zk, argPathForDep(dep), encoded, {
            ...options,
            maxBytes: encoded.length,
          }),
          this.zk.deleteIfPresent(dep, -1, options),
          this.zk.tryGetChildren(dependent),
        ]);
      } else {
        await writeValueIfAbsent(this.zk, argPathForDep(dep), encoded, {
          ...options,
          maxBytes: encoded.length,
        });
        await this.zk.deleteIfPresent(dep, -1, options);
        listing = await this.zk.tryGetChildren(dependent);
      }
    } catch (error) {
      if (isZkError(error, 'NO_NODE')) return undefined; // the dependent is gone (its plan was removed)
      throw error;
    }
    if (
      listing === undefined ||
      classifyTask(listing.children, listing.stat.cversion) !== 'runnable'
    )
      return undefined;
    // Sent, not awaited: the dependent is handed to a loop of this process at once, and the
    // session puts this entry before that loop's claim. A lost entry is found by the full scan.
    this.markRunnable(dependent, options).catch(() => undefined);
    this.predicted.remember(dependent, listing.children);
    return dependent;
  }

  /**
   * Deletes the task's children, propagating any prov-* first, then `result`, then `owner`, then the
   * node. `result` outlives the rest, so a crash part-way leaves a `finishable` task that the next
   * worker completes; once `result` is gone the task can no longer be taken at all.
   *
   * `encoded` is the stored result (undefined when the caller does not know it); `options.listed`
   * is the task's listing already sent by the caller (used for the first round).
   */
  async deleteTask(
    claim: Claim,
    encoded: Buffer | undefined,
    options: DeleteTaskOptions = {},
  ): Promise<void> {
    const { propagated = new Set<string>(), onRunnable, refeed = false } = options;
    const fence = this.fence(claim);
    for (let round = 0; round < MAX_DELETE_ROUNDS; round++) {
      const listing = await this.listForDeletion(
        claim.task,
        round === 0 ? options.listed : undefined,
      );
      if (listing === undefined) return;
      const children = listing.children;
      // Without the result (its deletion had begun), every prov-* listed before was fed; a later one
      // belongs to an addTask that takes the kept result itself, so it is removed with the rest.
      const provs =
        encoded === undefined
          ? []
          : children.filter(
              (name) => hasSequentialName(name, PROV_PREFIX) && !propagated.has(name),
            );
      const fed = await Promise.all(
        provs.map((name) =>
          this.propagate(childPath(claim.task, name), encoded ?? Buffer.alloc(0), fence, refeed),
        ),
      );
      onRunnable?.(fed.filter((task): task is string => task !== undefined));
      const rest = children.filter((name) => name !== RESULT && name !== OWNER);
      // The index entry goes with the rest, not earlier: if this worker dies while finishing, the
      // entry leads other workers back to the task as soon as its owner node is gone.
      const sentBefore = [
        this.unmarkRunnable(claim.task, fence),
        // A link holds a path, never chunks: one delete removes it. A task left with links only
        // is one whose deletion stopped half-way (`abandoned`), deleted on sight.
        ...rest
          .filter((name) => hasSequentialName(name, PROV_PREFIX))
          .map((name) => this.zk.deleteIfPresent(childPath(claim.task, name), -1, fence)),
      ];
      // Settled together at once, so that a refusal among them is handled whatever is awaited
      // first (a session that expired refuses every write sent under it).
      const before = Promise.allSettled(sentBefore);
      // An input may be chunked (a plain delete of it fails and its chunks go first), so the
      // inputs and whatever else is left are gone before `result` is deleted: a task left with an
      // input and nothing else would be taken by no worker and keep its plan open.
      const values = rest.filter((name) => !hasSequentialName(name, PROV_PREFIX));
      if (values.length > 0) {
        await Promise.all(
          values.map((name) => deleteValue(this.zk, childPath(claim.task, name), fence)),
        );
        throwFirstRefusal(await before);
      }
      if (await this.deleteResultOwnerAndNode(claim.task, children, encoded, fence, before)) return;
    }
    throw new OwnershipLostError(
      claim.task,
      `children kept appearing while it was being deleted (${MAX_DELETE_ROUNDS} rounds)`,
    );
  }

  /** The task's children: the listing the caller sent, or a new one when it sent none or it failed. */
  private async listForDeletion(
    task: string,
    sent: DeleteTaskOptions['listed'],
  ): Promise<TaskChildren | undefined> {
    if (sent !== undefined) {
      const listing = await sent;
      if (!(listing instanceof PrefetchError)) return listing;
    }
    return await this.zk.tryGetChildren(task);
  }

  /**
   * The last deletions of a task: `result`, then `owner`, then the task node, after `sentBefore`
   * (the deletions already sent: the index entry, links). With a plain result the three are sent
   * at once: the session applies them in order, so a crash leaves a prefix of them applied (as it
   * would between awaited deletes), and a delete that fails leaves the task `finishable` (its
   * result kept) or with its node (a late child), never half a value. A chunked result (or one the
   * caller does not know) is deleted first, chunk by chunk. True when the task node is gone; false
   * when a late child appeared and the caller goes round again.
   */
  private async deleteResultOwnerAndNode(
    task: string,
    children: readonly string[],
    encoded: Buffer | undefined,
    fence: WriteOptions,
    sentBefore: Promise<readonly PromiseSettledResult<unknown>[]>,
  ): Promise<boolean> {
    const hasResult = children.includes(RESULT);
    const resultIsPlain = encoded !== undefined && isStoredPlain(encoded);
    if (hasResult && !resultIsPlain) await deleteValue(this.zk, childPath(task, RESULT), fence);
    const deletions = await Promise.allSettled([
      hasResult && resultIsPlain
        ? this.zk.deleteIfPresent(childPath(task, RESULT), -1, fence)
        : undefined,
      children.includes(OWNER)
        ? this.zk.deleteIfPresent(childPath(task, OWNER), -1, fence)
        : undefined,
      this.zk.delete(task, -1, fence),
    ]);
    const nodeDeletion = deletions.pop();
    throwFirstRefusal([...(await sentBefore), ...deletions]);
    if (nodeDeletion?.status !== 'rejected') return true;
    const error: unknown = nodeDeletion.reason;
    if (isZkError(error, 'NO_NODE')) return true;
    if (isZkError(error, 'NOT_EMPTY')) return false; // a late child appeared: go round again
    throw error;
  }

  /**
   * The write options of a write made for the claim: fenced by its session, and refused once the
   * worker gave the claim back (or released it before it began to finish).
   */
  fence(claim: Claim): WriteOptions {
    if (claim.progress.phase === 'released')
      throw new OwnershipLostError(claim.task, 'the worker gave it back');
    if (claim.signal.aborted && claim.progress.phase !== 'finishing')
      throw new OwnershipLostError(claim.task, 'the worker released it');
    return { fence: claim.session };
  }
}
