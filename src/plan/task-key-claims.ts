/**
 * Keys given with `addTask(…, { key })` are unique within their plan. With no multi-op, a key is
 * held by a claim node, `<plan>/keys/key-<encoded key>` holding `{ task }`, made by the batch that
 * adds the task, after the task node exists and before the batch is committed (its `ready`, or its
 * batch marker), with the batch's fence:
 *
 * - The first create wins; two processes racing for a key cannot both make the node. The loser
 *   reads whom it names and fails with DuplicateTaskKeyError (TASK_KEY_TAKEN); its batch is removed.
 * - A lost reply: the create is sent again and answers NODE_EXISTS; read back (after a sync), the
 *   claim names our own task, so the key is ours.
 * - A crash (or an expired session) between steps leaves a task that is not ready, perhaps with its
 *   claim. Whoever deletes such a task (the workers' settleOrphan, the batch's own clean-up) frees
 *   its key first, then deletes it: a claim never outlives an unfinished task. One that finds such a
 *   task holding the key it wants (an addTask sent again through a new session) settles it the same
 *   way, then claims the key; a batch that was committed is finished instead, and keeps its key.
 * - A claim is never removed for a task that was made ready: the key stays taken after the task
 *   ran, so `show`, `why` and alerts still know it, and a second addTask with it is refused.
 *
 * Keys a plan's spec gave its tasks are in its spec record, not claimed one by one; an addTask with
 * one of them is refused too.
 */
import { PlanNotFoundError } from '../errors/plan-errors.js';
import { DuplicateTaskKeyError } from '../errors/task-key-errors.js';
import { isZkError } from '../errors/zk-error.js';
import { encodeKeyClaim } from '../store/key-claim.js';
import { classifyTask } from '../store/task-state.js';
import type { TaskStore } from '../store/task-store.js';
import type { TaskStamp } from '../store/task-reader.js';
import { TASK_KEYS, batchMarkerName, childPath, keyClaimPath } from '../zk/layout.js';
import type { WriteOptions, ZkSession } from '../zk/zk-client-types.js';
import type { Zk } from '../zk/zk.js';
import type { TaskKeys } from './task-keys.js';

/** How often a claim is tried again after the task holding its key was found unfinished and deleted (each time by another racer). */
const MAX_CLAIM_ROUNDS = 5;

/** What the claims need of the batch being written. */
export interface ClaimingBatch {
  readonly session: ZkSession;
  readonly fence: WriteOptions;
  /** True while a batch of this process is being written (so its tasks are not someone's leftovers). */
  readonly building: (batch: string) => boolean;
  /** Removes an unfinished batch of this very session that a failed addTasks could not remove (its claims first). */
  readonly removeBatch: (stamp: TaskStamp) => Promise<void>;
}

export class TaskKeyClaims {
  constructor(
    private readonly zk: Zk,
    private readonly store: TaskStore,
    private readonly keys: TaskKeys,
  ) {}

  /** Refuses keys the plan's spec record gives its tasks (DuplicateTaskKeyError); before anything of the batch is written. */
  async assertNotInSpec(plan: string, keys: readonly string[]): Promise<void> {
    const specTasks = await this.keys.specTasks(plan);
    for (const key of keys) {
      const holder = specTasks.get(key);
      if (holder !== undefined) throw new DuplicateTaskKeyError(plan, key, holder);
    }
  }

  /** Claims `key` for `task` (a task of the batch, not ready yet); DuplicateTaskKeyError when another task holds it. */
  async claim(plan: string, key: string, task: string, batch: ClaimingBatch): Promise<void> {
    try {
      await this.zk.createIfAbsent(childPath(plan, TASK_KEYS), null, 'persistent', batch.fence);
    } catch (error) {
      if (isZkError(error, 'NO_NODE')) throw new PlanNotFoundError(plan);
      throw error;
    }
    const path = keyClaimPath(plan, key);
    for (let round = 0; round < MAX_CLAIM_ROUNDS; round++) {
      let retried: boolean;
      try {
        await this.zk.create(path, encodeKeyClaim(task, path), 'persistent', batch.fence);
        return;
      } catch (error) {
        if (!isZkError(error, 'NODE_EXISTS')) throw error;
        retried = error.retried;
      }
      if (retried) await this.zk.sync(path); // our first try may have landed on a server this session does not read from
      const holder = (await this.store.reads.readKeyClaim(plan, key))?.task;
      if (holder === task) return; // our own first try, whose reply was lost
      if (holder !== undefined && !(await this.freeIfUnfinished(plan, holder, batch))) {
        // Kept, unless someone else freed it meanwhile (a worker settling the same dead builder's
        // task releases its key, then deletes the task): then the holder read above is stale.
        const now = (await this.store.reads.readKeyClaim(plan, key))?.task;
        if (now === holder) throw new DuplicateTaskKeyError(plan, key, holder);
      }
      // Gone meanwhile, or freed: try again (another racer may take it first).
    }
    throw new DuplicateTaskKeyError(
      plan,
      key,
      (await this.store.reads.readKeyClaim(plan, key))?.task,
    );
  }

  /**
   * Deletes `holder` (and so frees its key) when it belongs to a batch that will never be finished:
   * its builder's session is gone, or it is this session's own failed batch; true when the holder is
   * gone. A task that was made ready, or whose batch was committed, or whose builder still writes it,
   * keeps its key.
   */
  private async freeIfUnfinished(
    plan: string,
    holder: string,
    batch: ClaimingBatch,
  ): Promise<boolean> {
    const [stamp, listing] = await Promise.all([
      this.store.reads.readStamp(holder),
      this.store.reads.inspectTask(holder),
    ]);
    if (stamp === undefined || listing === undefined) return false; // done and deleted (or another tool's task): the key stays taken
    if (classifyTask(listing.children, listing.childVersion) !== 'building') return false;
    // Read after the claim: every write before it (the holder's builder node, its batch marker) shows.
    const plansChildren = await this.zk.tryGetChildren(plan);
    if (plansChildren === undefined) throw new PlanNotFoundError(plan);
    const children = plansChildren.children;
    if (stamp.builder === batch.session.id) {
      if (batch.building(stamp.batch) || children.includes(batchMarkerName(stamp.batch)))
        return false;
      await batch.removeBatch(stamp);
      return (await this.zk.exists(holder)) === undefined;
    }
    return (await this.store.settleOrphan(holder, children)) === 'deleted';
  }
}
