import { EventEmitter } from 'node:events';
import { NODE_REPLACED_RC, ZkError, isZkError } from '../errors/zk-error.js';
import { childPath, parentOf } from './layout.js';
import type { ZkStat } from './native-client.js';
import type { Zk } from './zk.js';
import type {
  CreateMode,
  SessionState,
  Watcher,
  WriteOptions,
  ZkClientEvents,
  ZkOperationCounts,
  ZkSession,
} from './zk-client-types.js';

/**
 * The operations of `Zk` that are made of its primitives (create, getData, getChildren, delete),
 * written once for every implementation, so the real client and the in-memory one cannot differ in them.
 *
 * @category ZooKeeper client
 */
export abstract class ZkBase extends EventEmitter<ZkClientEvents> implements Zk {
  abstract readonly counts: ZkOperationCounts;
  /** The connection state (see SessionState). */
  abstract get state(): SessionState;
  abstract get session(): ZkSession;
  abstract readonly sessionTimeoutMs: number;
  abstract isCurrent(session: ZkSession): boolean;
  abstract close(): void;
  abstract create(
    path: string,
    data?: Buffer | null,
    mode?: CreateMode,
    options?: WriteOptions,
  ): Promise<string>;
  abstract exists(path: string, watcher?: Watcher): Promise<ZkStat | undefined>;
  abstract getData(path: string, watcher?: Watcher): Promise<{ stat: ZkStat; data: Buffer | null }>;
  abstract getChildren(
    path: string,
    watcher?: Watcher,
  ): Promise<{ children: string[]; stat: ZkStat }>;
  /** Replaces the node's data if its version is `version` (-1 matches every version); resolves the new stat. */
  abstract setData(
    path: string,
    data: Buffer | null,
    version?: number,
    options?: WriteOptions,
  ): Promise<ZkStat>;
  /** Deletes the node if its version is `version` (-1 matches every version); it must have no children. */
  abstract delete(path: string, version?: number, options?: WriteOptions): Promise<void>;
  abstract sync(path: string): Promise<void>;

  /** Waits until the client is connected again; false when it will not be (closed, or given up). */
  protected abstract reconnected(): Promise<boolean>;

  /**
   * Sends an operation with `attempt`; after a connection loss (the outcome unknown), waits for the
   * connection to come back and sends it again, unless `resend` is false. `ZkError.retried` tells a
   * caller that a NODE_EXISTS or NO_NODE may come from its own first try.
   *
   * A write with a `target` (its node's incarnation, see `WriteOptions.incarnation`) is sent again
   * only while that very node is still there: its first try may have landed, and the node may have
   * been deleted and created again since (by another session, or by this one's next holder), back
   * at version 0 where the repeated write would land. The check reads after a sync, since the server
   * this client reconnected to may not have applied the first try yet.
   *
   * @internal
   */
  protected async resending<T>(
    resend: boolean,
    attempt: () => Promise<T>,
    target?: ResendTarget | CreateTarget,
  ): Promise<T> {
    for (let retried = false; ; retried = true) {
      if (retried && target !== undefined)
        await ('incarnation' in target
          ? this.assertStillThere(target)
          : this.assertStillWanted(target));
      try {
        return await attempt();
      } catch (error) {
        if (!(error instanceof ZkError)) throw error;
        error.retried = retried;
        if (!resend || (error.code !== 'CONNECTION_LOSS' && error.code !== 'OPERATION_TIMEOUT'))
          throw error;
        if (!(await this.reconnected())) throw error;
      }
    }
  }

  /**
   * A setData or delete, guarded as `options` say (see `resending`); a setData with an incarnation
   * that landed on another node than that one fails NODE_REPLACED (it happens only when the node was
   * replaced between its caller's read and this write, at the same version).
   *
   * @internal
   */
  protected async resendingWrite<T extends ZkStat | void>(
    op: 'setData' | 'delete',
    path: string,
    options: WriteOptions,
    attempt: () => Promise<T>,
  ): Promise<T> {
    const { incarnation, fence } = options;
    const target = incarnation === undefined ? undefined : { op, path, incarnation, fence };
    const value = await this.resending(true, attempt, target);
    if (incarnation !== undefined && op === 'setData' && (value as ZkStat).czxid !== incarnation) {
      throw new ZkError(
        op,
        NODE_REPLACED_RC,
        path,
        `ZooKeeper setData of ${path} landed on a node created after the one it was meant for (czxid ${incarnation}, now ${(value as ZkStat).czxid})`,
      );
    }
    return value;
  }

  /**
   * A create, sent again after a connection loss unless `resend` is false, or `options.stillWanted`
   * says the state it was decided on has moved on (see `WriteOptions.stillWanted`).
   *
   * @internal
   */
  protected async resendingCreate(
    path: string,
    options: WriteOptions,
    resend: boolean,
    attempt: () => Promise<string>,
  ): Promise<string> {
    const { stillWanted, fence } = options;
    return await this.resending(
      resend,
      attempt,
      stillWanted === undefined ? undefined : { path, stillWanted, fence },
    );
  }

  /** Throws NODE_EXISTS (`retried` set) when a create is no longer wanted: its first try landed. */
  private async assertStillWanted(target: CreateTarget): Promise<void> {
    if (target.fence !== undefined && !this.isCurrent(target.fence)) return; // refused when sent
    await this.sync(target.path);
    if (await target.stillWanted()) return;
    const error = new ZkError(
      'create',
      -110,
      target.path,
      `ZooKeeper create of ${target.path} not sent again: its first try landed and the state moved on since`,
    );
    error.retried = true;
    throw error;
  }

  /** Throws NO_NODE (`retried` set) unless the node `target` was meant for is still at its path. */
  private async assertStillThere(target: ResendTarget): Promise<void> {
    // A fenced write whose session has ended is refused when sent: nothing to read for it.
    if (target.fence !== undefined && !this.isCurrent(target.fence)) return;
    await this.sync(target.path);
    const stat = await this.exists(target.path);
    if (stat !== undefined && stat.czxid === target.incarnation) return;
    const error = new ZkError(
      target.op,
      -101,
      target.path,
      `ZooKeeper ${target.op} of ${target.path} not sent again: the node it was meant for (czxid ${target.incarnation}) is ${stat === undefined ? 'gone' : `replaced (czxid ${stat.czxid})`}`,
    );
    error.retried = true;
    throw error;
  }

  async createIfAbsent(
    path: string,
    data: Buffer | null = null,
    mode: CreateMode = 'persistent',
    options: WriteOptions = {},
  ): Promise<boolean> {
    try {
      await this.create(path, data, mode, options);
      return true;
    } catch (error) {
      if (isZkError(error, 'NODE_EXISTS')) return false;
      throw error;
    }
  }

  /** No ACLs to check here; ZkClient checks them when an `acl` is configured. */
  assertOwnAcl(_path: string, _what: string): Promise<void> {
    return Promise.resolve();
  }

  ensurePath(path: string): Promise<void> {
    return this.createMissing(path);
  }

  /** Creates `path` and its missing ancestors (a subclass's ensurePath checks only the node it was asked for). */
  private async createMissing(path: string): Promise<void> {
    if (path === '/') return;
    if (await this.exists(path)) return;
    await this.createMissing(parentOf(path));
    await this.createIfAbsent(path);
  }

  async tryGetData(path: string): Promise<{ stat: ZkStat; data: Buffer | null } | undefined> {
    try {
      return await this.getData(path);
    } catch (error) {
      if (isZkError(error, 'NO_NODE')) return undefined;
      throw error;
    }
  }

  async tryGetChildren(
    path: string,
    watcher?: Watcher,
  ): Promise<{ children: string[]; stat: ZkStat } | undefined> {
    try {
      return await this.getChildren(path, watcher);
    } catch (error) {
      if (isZkError(error, 'NO_NODE')) return undefined;
      throw error;
    }
  }

  async deleteIfPresent(path: string, version = -1, options: WriteOptions = {}): Promise<boolean> {
    try {
      await this.delete(path, version, options);
      return true;
    } catch (error) {
      if (isZkError(error, 'NO_NODE')) return false;
      throw error;
    }
  }

  async deleteRecursive(path: string): Promise<void> {
    for (;;) {
      const listing = await this.tryGetChildren(path);
      if (listing === undefined) return;
      await Promise.all(
        listing.children.map((child) => this.deleteRecursive(childPath(path, child))),
      );
      try {
        await this.delete(path);
        return;
      } catch (error) {
        if (isZkError(error, 'NO_NODE')) return;
        if (!isZkError(error, 'NOT_EMPTY')) throw error; // a child appeared meanwhile: go round again
      }
    }
  }
}

/** A create guarded by `WriteOptions.stillWanted`. */
interface CreateTarget {
  readonly path: string;
  readonly stillWanted: () => Promise<boolean>;
  readonly fence: WriteOptions['fence'];
}

/** The node a guarded write was meant for. */
interface ResendTarget {
  readonly op: 'setData' | 'delete';
  readonly path: string;
  readonly incarnation: number;
  readonly fence: WriteOptions['fence'];
}
