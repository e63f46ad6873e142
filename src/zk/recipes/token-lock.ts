/**
 * An ephemeral lock node whose holder is told apart by a token of its own, not by its session
 * alone: two holders in one process (a trigger and a scheduler's pass, two listeners) share a
 * session, and each must see the other's lock as taken. The lock goes with its holder's session.
 */
import { randomUUID } from 'node:crypto';
import { isZkError } from '../../errors/zk-error.js';
import { encodeValue } from '../../serialization/codec.js';
import type { Watcher, WriteOptions, ZkSession } from '../zk-client-types.js';
import { retryReleaseWhileSessionLives } from '../retry-release.js';
import type { Zk } from '../zk.js';

/** What a try at the lock found: this holder's now, another's, or none (released between the create and the read). */
export type LockAttempt = 'taken' | 'held' | 'gone';

export class TokenLock {
  private readonly token: Buffer;

  /**
   * `holder` names the holder in the lock's value (`<holder>#<token>`, for those who look, as the
   * fault tests do to find the firing process). The lock's writes are fenced by `session`: a take
   * sent again after an expiry would land in the next session, whose lock this holder would not
   * know for its own, and nobody could take it until that session ends.
   */
  constructor(
    private readonly zk: Zk,
    readonly path: string,
    private readonly session: ZkSession,
    options: { readonly holder?: string } = {},
  ) {
    this.token = encodeValue(
      options.holder === undefined ? randomUUID() : `${options.holder}#${randomUUID()}`,
      'lock',
      path,
    );
  }

  /**
   * Creates the lock unless it exists (a create whose reply was lost and that landed counts as
   * taken). `watcher` is set on another holder's lock and fires at its end. NO_NODE (the lock's
   * parent is gone) is thrown to the caller.
   */
  async take(watcher?: Watcher): Promise<LockAttempt> {
    try {
      await this.zk.create(this.path, this.token, 'ephemeral', this.writeOptions());
      return 'taken';
    } catch (error) {
      if (!isZkError(error, 'NODE_EXISTS')) throw error;
      // Maybe this take's own first try, whose reply was lost: the server may not have applied it yet.
      if (error.retried) await this.zk.sync(this.path);
    }
    const held = await this.read(watcher);
    if (held === undefined) return 'gone';
    return this.isMine(held) ? 'taken' : 'held';
  }

  /**
   * Deletes the lock if this holder has it (after an expiry it may be another process's). The delete
   * names the lock node read: sent again after a lost reply, it never takes the lock of a holder
   * that took it since, in another process or in this one. A release that fails (ZooKeeper
   * unreachable for longer than the client waits) is tried again every second while the session
   * lives: a lock left by a live session would hold back everyone else until that session ends.
   */
  async release(): Promise<void> {
    try {
      await this.releaseOnce();
    } catch (error) {
      retryReleaseWhileSessionLives(this.zk, this.session, () => this.releaseOnce());
      throw error;
    }
  }

  private async releaseOnce(): Promise<void> {
    const held = await this.read();
    if (held !== undefined && this.isMine(held))
      await this.zk.deleteIfPresent(this.path, held.stat.version, {
        ...this.writeOptions(),
        incarnation: held.stat.czxid,
      });
  }

  private isMine(held: {
    readonly stat: { readonly ephemeralOwner: string };
    readonly data: Buffer | null;
  }): boolean {
    return held.stat.ephemeralOwner === this.session.id && held.data?.equals(this.token) === true;
  }

  private writeOptions(): WriteOptions {
    return { fence: this.session };
  }

  private async read(watcher?: Watcher): Promise<Awaited<ReturnType<Zk['getData']>> | undefined> {
    try {
      return await this.zk.getData(this.path, watcher);
    } catch (error) {
      if (isZkError(error, 'NO_NODE')) return undefined;
      throw error;
    }
  }
}
