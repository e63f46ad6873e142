/**
 * Arming of the web view feeds' ZooKeeper watches. Watches are one-shot: each is armed again
 * before the next read, so no change between the read and the re-arm is missed.
 */
import type { WatchEvent, Watcher, ZkClient } from '../zk/zk-client.js';

/** The ZooKeeper calls the feeds set watches with. */
export type WatchClient = Pick<ZkClient, 'getChildren' | 'tryGetChildren' | 'exists'>;

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
      await set(watcher);
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

/** A child watch on `path`, or an existence watch when it does not exist; resolves whether it exists. */
export async function watchChildren(zk: WatchClient, path: string, watcher: Watcher): Promise<boolean> {
  const listing = await zk.tryGetChildren(path, watcher);
  if (listing !== undefined) return true;
  await zk.exists(path, watcher); // sets a watch whether or not the node exists
  return false;
}
