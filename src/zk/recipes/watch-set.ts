/**
 * Arming of the web view feeds' ZooKeeper watches. Watches are one-shot: each is armed again
 * before the next read, so no change between the read and the re-arm is missed.
 */
import { isZkError } from '../../errors/zk-error.js';
import { nameOf, parentOf } from '../layout.js';
import type { ZkClient } from '../zk-client.js';
import type { WatchEvent, Watcher } from '../zk-client-types.js';

/** The ZooKeeper calls the feeds set watches with. */
export type WatchClient = Pick<ZkClient, 'getChildren' | 'tryGetChildren' | 'exists' | 'getData'>;

/** What a setter given to `WatchSet.arm` resolves when it set no watch (nothing there to watch): its key is not armed then. */
export const NO_WATCH: unique symbol = Symbol('no watch set');

/** One-shot watches by key: a key is armed until its watch fires (or its arming fails). */
export class WatchSet {
  private readonly armed = new Set<string>();

  constructor(private readonly onFire: (key: string, event: WatchEvent) => void) {}

  get size(): number {
    return this.armed.size;
  }

  has(key: string): boolean {
    return this.armed.has(key);
  }

  /** Sets the watch with `set` unless `key` is armed already. */
  async arm(key: string, set: (watcher: Watcher) => Promise<unknown>): Promise<void> {
    if (this.armed.has(key)) return;
    this.armed.add(key);
    let fired = false;
    const watcher: Watcher = (event) => {
      if (fired) return;
      fired = true;
      this.armed.delete(key);
      this.onFire(key, event);
    };
    try {
      if ((await set(watcher)) === NO_WATCH && !fired) this.armed.delete(key);
    } catch (error) {
      if (!fired) this.armed.delete(key);
      throw error;
    }
  }

  /** Forgets every key: their watches may still fire, into a feed that ignores them. */
  clear(): void {
    this.armed.clear();
  }
}

/**
 * A child watch on `path`, or an existence watch when it does not exist; resolves whether it
 * exists. Only for the root a feed shows (one watch per feed): below it, watchNodeOrParent.
 */
export async function watchChildren(
  zk: WatchClient,
  path: string,
  watcher: Watcher,
): Promise<boolean> {
  const listing = await zk.tryGetChildren(path, watcher);
  if (listing !== undefined) return true;
  await zk.exists(path, watcher); // sets a watch whether or not the node exists
  return false;
}

/**
 * A watch on `path` while it exists (on its children or its data), else a child watch on its
 * parent, whose children change when it appears. So every watch is on a node that exists and
 * fires at the latest when that node is deleted: an existence watch on a node that never appears
 * (the failed marker of a plan that succeeds, the owner of a task deleted before it ran) would
 * stay until the session ends. Resolves whether `path` exists, or NO_WATCH when its parent is
 * gone too.
 */
export async function watchNodeOrParent(
  zk: WatchClient,
  path: string,
  on: 'children' | 'data',
  watcher: Watcher,
): Promise<boolean | typeof NO_WATCH> {
  for (;;) {
    if (
      on === 'children'
        ? (await zk.tryGetChildren(path, watcher)) !== undefined
        : await dataWatched(zk, path, watcher)
    )
      return true;
    const siblings = await zk.tryGetChildren(parentOf(path), watcher);
    if (siblings === undefined) return NO_WATCH;
    if (!siblings.children.includes(nameOf(path))) return false;
    // It appeared between the two reads: watch it, not only its parent.
  }
}

async function dataWatched(zk: WatchClient, path: string, watcher: Watcher): Promise<boolean> {
  try {
    await zk.getData(path, watcher);
    return true;
  } catch (error) {
    if (isZkError(error, 'NO_NODE')) return false;
    throw error;
  }
}
