/**
 * Cluster-wide concurrency limits per key, held through ZooKeeper like Curator's semaphore with
 * leases: a task with a concurrency key runs only while its worker holds one of the key's
 * ephemeral slot nodes (src/limits/limit-record.ts). A slot dies with its holder's session, so a
 * crashed worker frees it at session expiry, and no step of a crash leaks one: a slot is created
 * (ephemeral) right before the function starts and deleted right after it returns.
 */
import { randomUUID } from 'node:crypto';
import { isZkError } from '../errors/zk-error.js';
import type { Watcher, ZkSession } from '../zk/zk-client-types.js';
import { LIMITS, childPath } from '../zk/layout.js';
import { retryReleaseWhileSessionLives } from '../zk/retry-release.js';
import type { Zk } from '../zk/zk.js';
import {
  decodeSlot,
  encodeLimit,
  encodeSlot,
  freeSlots,
  holdsAboveLimit,
  keepsSlot,
  keyNodeName,
  keyOfNodeName,
  parseLimit,
  slotIndex,
  slotName,
  type SlotRecord,
} from './limit-record.js';

/** A slot held for one run. */
export interface SlotLease {
  readonly path: string;
  /**
   * Deletes the slot if this session still holds it; true once it is gone. A delete that fails
   * (ZooKeeper unreachable) is tried again every second while the session lives: a slot left by a
   * live session would hold a place of the limit until that session ends. Safe to call again.
   */
  release(): Promise<boolean>;
}

/** What acquiring for a task found. */
export type Acquired =
  | { readonly kind: 'unlimited' }
  | { readonly kind: 'held'; readonly lease: SlotLease }
  | { readonly kind: 'full'; readonly limitPath: string };

export class ConcurrencyLimits {
  constructor(
    private readonly zk: Zk,
    private readonly random: () => number = Math.random,
  ) {}

  /** Where the limit of `key` under `parent` lives. */
  limitPath(parent: string, key: string): string {
    return childPath(childPath(parent, LIMITS), keyNodeName(key));
  }

  /** Sets (or changes) the limit; waiting workers hear it through their watch on the limit node. */
  async setLimit(parent: string, key: string, limit: number): Promise<void> {
    const path = this.limitPath(parent, key);
    await this.zk.ensurePath(childPath(parent, LIMITS));
    if (!(await this.zk.createIfAbsent(path, encodeLimit(limit, path))))
      await this.zk.setData(path, encodeLimit(limit, path));
  }

  /** The limit of `key` under `parent` and its holders; undefined when the key has no limit. */
  async readLimit(
    parent: string,
    key: string,
  ): Promise<{ limit: number; holders: SlotRecord[] } | undefined> {
    const path = this.limitPath(parent, key);
    const node = await this.zk.tryGetData(path);
    const limit = node === undefined ? undefined : parseLimit(path, node.data);
    if (limit === undefined) return undefined;
    const listing = await this.zk.tryGetChildren(path);
    const slots = await Promise.all(
      (listing?.children ?? []).map((name) => this.zk.tryGetData(childPath(path, name))),
    );
    const holders = slots.flatMap((slot) =>
      slot === undefined
        ? []
        : [decodeSlot(path, slot.data)].filter(
            (record): record is SlotRecord => record !== undefined,
          ),
    );
    return { limit, holders };
  }

  /** Every key with a limit under `parent`, sorted by key, with its limit and holders now. */
  async listLimits(
    parent: string,
  ): Promise<{ key: string; limit: number; holders: SlotRecord[] }[]> {
    const listing = await this.zk.tryGetChildren(childPath(parent, LIMITS));
    const keys = (listing?.children ?? [])
      .flatMap((name) => [keyOfNodeName(name)].filter((key): key is string => key !== undefined))
      .sort();
    const limits = await Promise.all(
      keys.map(async (key) => ({ key, read: await this.readLimit(parent, key) })),
    );
    return limits.flatMap(({ key, read }) => (read === undefined ? [] : [{ key, ...read }]));
  }

  /**
   * Takes a free slot of the key for `record.task`, for the claim on `session`, if the key has a
   * limit; else says it is unlimited, or full. The slot is created fenced by that session: sent
   * again after an expiry it would be held by the next session, which this run's lease does not
   * know, and the key would stay blocked until the process ends.
   */
  async acquire(
    parent: string,
    key: string,
    record: SlotRecord,
    session: ZkSession,
  ): Promise<Acquired> {
    const limitPath = this.limitPath(parent, key);
    const node = await this.zk.tryGetData(limitPath);
    const limit = node === undefined ? undefined : parseLimit(limitPath, node.data);
    if (limit === undefined) return { kind: 'unlimited' };
    const children = (await this.zk.tryGetChildren(limitPath))?.children ?? [];
    for (const index of freeSlots(
      children,
      limit,
      Math.floor(this.random() * Math.max(1, limit)),
    )) {
      const path = childPath(limitPath, slotName(index));
      // The lease id tells this run's slot from any other, of this session too (another loop, a later run of the task).
      const bytes = encodeSlot({ ...record, lease: randomUUID() }, path);
      const taken = await this.take(path, bytes, session);
      if (taken === 'no-limit') return { kind: 'unlimited' };
      if (taken === 'other') continue;
      const lease = this.lease(path, bytes, session);
      // The limit as it is now: read after this session's create was answered, it is at least as new as that create, so
      // a lowering that was answered before this acquire began is seen even if the first read came from a lagging server.
      const now = await this.zk.tryGetData(limitPath);
      const current = now === undefined ? undefined : parseLimit(limitPath, now.data);
      if (current === undefined) return { kind: 'held', lease }; // the limit went meanwhile: nothing to keep to
      if (
        (current < limit || holdsAboveLimit(children, current)) &&
        !(await this.mayRun(limitPath, path, current))
      ) {
        await lease.release();
        break;
      }
      return { kind: 'held', lease };
    }
    return { kind: 'full', limitPath };
  }

  /** Creates the slot; 'taken' when it is this run's now (also when a lost reply's first try made it). */
  private async take(
    path: string,
    bytes: Buffer,
    session: ZkSession,
  ): Promise<'taken' | 'other' | 'no-limit'> {
    try {
      await this.zk.create(path, bytes, 'ephemeral', { fence: session });
      return 'taken';
    } catch (error) {
      if (isZkError(error, 'NO_NODE')) return 'no-limit'; // the limit was removed meanwhile
      if (!isZkError(error, 'NODE_EXISTS')) throw error;
      if (!error.retried) return 'other';
    }
    // Taken by another worker, or by this very create whose first reply was lost: the server this
    // session reads from may not have applied that first try yet, so sync before reading it back.
    await this.zk.sync(path);
    const slot = await this.zk.tryGetData(path);
    return slot?.stat.ephemeralOwner === session.id && slot.data?.equals(bytes) === true
      ? 'taken'
      : 'other';
  }

  /**
   * Whether a slot just taken beside slots above a lowered limit may run: two workers that each saw
   * one place left can both take one, so the slots are ranked by creation (see keepsSlot).
   */
  private async mayRun(limitPath: string, path: string, limit: number): Promise<boolean> {
    // Listed after this session's create was answered, so every slot created before it is seen.
    const names = ((await this.zk.tryGetChildren(limitPath))?.children ?? []).filter(
      (name) => slotIndex(name) !== undefined,
    );
    if (names.length <= limit) return true;
    const stats = await Promise.all(
      names.map(async (name) => ({ name, stat: await this.zk.exists(childPath(limitPath, name)) })),
    );
    const slots = stats.flatMap(({ name, stat }) =>
      stat === undefined ? [] : [{ name, czxid: stat.czxid }],
    );
    const mine = slots.find((slot) => childPath(limitPath, slot.name) === path);
    return mine !== undefined && keepsSlot(mine, slots, limit);
  }

  /**
   * Watches the limit node (its slots and its value) once; resolves true when a slot is free
   * right now, so that the caller does not wait for a change that already happened.
   */
  async watch(limitPath: string, watcher: Watcher): Promise<boolean> {
    const [node, listing] = await Promise.all([
      this.zk.tryGetData(limitPath),
      this.zk.tryGetChildren(limitPath, watcher),
    ]);
    if (listing === undefined) return true; // no limit any more
    await this.zk.exists(limitPath, watcher); // its value (a raised limit) too
    const limit = node === undefined ? undefined : parseLimit(limitPath, node.data);
    return limit === undefined || freeSlots(listing.children, limit, 0).length > 0;
  }

  /**
   * The lease of a slot this run took. Its delete is fenced by the session (a slot of an expired
   * session went with it; its name may be another worker's now) and names the slot's incarnation:
   * sent again after a lost reply, it is not resent once the slot it meant is gone, since another
   * worker, or another loop of this very session, may hold a slot of that name by then.
   */
  private lease(path: string, bytes: Buffer, session: ZkSession): SlotLease {
    const deleteIfMine = async (): Promise<void> => {
      const slot = await this.zk.tryGetData(path);
      if (
        slot === undefined ||
        slot.stat.ephemeralOwner !== session.id ||
        slot.data?.equals(bytes) !== true
      )
        return;
      await this.zk
        .delete(path, slot.stat.version, { fence: session, incarnation: slot.stat.czxid })
        .catch((error: unknown) => {
          if (!isZkError(error, 'NO_NODE', 'BAD_VERSION', 'SESSION_EXPIRED')) throw error;
        });
    };
    let released: Promise<boolean> | undefined;
    return {
      path,
      release: () =>
        (released ??= deleteIfMine().then(
          () => true,
          () => {
            retryReleaseWhileSessionLives(this.zk, session, deleteIfMine);
            return false;
          },
        )),
    };
  }
}
