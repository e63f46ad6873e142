/**
 * One server of the in-memory ensemble as its sessions see it: a copy of the znode tree that has
 * applied the ensemble's committed writes up to some point, and the watches its sessions set on
 * it. The leader's view applies every write as it commits; a follower's view applies them later,
 * in order, when told to catch up (`MemoryZooKeeper.catchUp`), and only then fires its watches, as
 * a real follower does. A session reads from its server's view, so it may see a state older than
 * another session's last write until it syncs.
 */
import type { WatchEvent } from '../zk/zk-client-types.js';
import type { WatchDelivery } from './memory-protocol.js';
import { MemoryTree, parentPathOf } from './memory-tree.js';
import type { CreateMode } from '../zk/zk-client-types.js';

/** Which call set a watch: `exists` (also on an absent node), `getData` (`data`) or `getChildren` (`child`). */
export type WatchKind = 'data' | 'exists' | 'child';

/** A write the leader committed, as a follower applies it again (it was checked when it committed). */
export type CommittedWrite =
  | {
      readonly op: 'create';
      readonly path: string;
      readonly data: Buffer | null;
      readonly mode: CreateMode;
      readonly owner: string;
      readonly at: number;
    }
  | {
      readonly op: 'setData';
      readonly path: string;
      readonly data: Buffer | null;
      readonly at: number;
    }
  | { readonly op: 'delete'; readonly path: string; readonly at: number };

/**
 * A watch as the server holds it: one per session, path and kind, however many calls set it (a
 * real server keeps one watcher per connection and path), with every caller to tell when it fires.
 */
export interface WatchRegistration {
  readonly sessionId: string;
  readonly clientName: string;
  readonly path: string;
  readonly kind: WatchKind;
  readonly deliveries: WatchDelivery[];
}

export class MemoryView {
  readonly tree: MemoryTree;
  /** How many committed writes this view has applied. */
  applied = 0;
  private readonly watchesByPath = new Map<string, WatchRegistration[]>();
  private replayAt = 0;

  /** `clock` for the leader's view; a follower's view takes each write's time from the write. */
  constructor(clock?: () => number) {
    this.tree = new MemoryTree(clock ?? (() => this.replayAt));
  }

  /** Applies a write the leader committed (and fires this view's watches for it). */
  replay(write: CommittedWrite): void {
    this.replayAt = write.at;
    switch (write.op) {
      case 'create':
        this.created(this.tree.create(write.path, write.data, write.mode, write.owner));
        break;
      case 'setData':
        this.tree.setData(write.path, write.data, -1);
        this.changed(write.path);
        break;
      case 'delete':
        this.tree.delete(write.path, -1);
        this.deleted(write.path);
        break;
    }
    this.applied += 1;
  }

  created(path: string): void {
    this.fire(path, ['exists', 'data'], 'created');
    this.fire(parentPathOf(path), ['child'], 'child');
  }

  changed(path: string): void {
    this.fire(path, ['exists', 'data'], 'changed');
  }

  deleted(path: string): void {
    this.fire(path, ['exists', 'data', 'child'], 'deleted');
    this.fire(parentPathOf(path), ['child'], 'child');
  }

  register(
    sessionId: string,
    clientName: string,
    path: string,
    kind: WatchKind,
    deliver: WatchDelivery,
  ): void {
    const list = this.watchesByPath.get(path) ?? [];
    const same = list.find((watch) => watch.sessionId === sessionId && watch.kind === kind);
    if (same !== undefined) {
      same.deliveries.push(deliver);
      return;
    }
    list.push({ sessionId, clientName, path, kind, deliveries: [deliver] });
    this.watchesByPath.set(path, list);
  }

  registrations(): WatchRegistration[] {
    return [...this.watchesByPath.values()].flat();
  }

  /** Removes the session's watches and returns them (unfired). */
  dropSession(sessionId: string): WatchRegistration[] {
    const dropped: WatchRegistration[] = [];
    for (const [path, list] of this.watchesByPath) {
      const kept = list.filter((watch) => watch.sessionId !== sessionId);
      dropped.push(...list.filter((watch) => watch.sessionId === sessionId));
      if (kept.length === 0) this.watchesByPath.delete(path);
      else this.watchesByPath.set(path, kept);
    }
    return dropped;
  }

  /** One-shot: the matching watches are removed now and told on a later microtask. */
  private fire(path: string, kinds: readonly WatchKind[], type: WatchEvent['type']): void {
    const list = this.watchesByPath.get(path);
    if (list === undefined) return;
    const fired = list.filter((watch) => kinds.includes(watch.kind));
    const kept = list.filter((watch) => !kinds.includes(watch.kind));
    if (kept.length === 0) this.watchesByPath.delete(path);
    else this.watchesByPath.set(path, kept);
    for (const watch of fired)
      for (const deliver of watch.deliveries) queueMicrotask(() => deliver({ type, path }));
  }
}
