/**
 * One-shot ZooKeeper watches by name for a pass-driven loop (the job worker, the manager): a watch
 * is set only while none of that name is armed, and each one that fires wakes the loop once.
 */
import type { Watcher } from '../zk-client-types.js';

export class ArmedWatches {
  private readonly armed = new Set<string>();

  constructor(private readonly changed: () => void) {}

  /** A watcher to pass with the read of `name`, or none while one is still armed. */
  watch(name: string): Watcher | undefined {
    if (this.armed.has(name)) return undefined;
    this.armed.add(name);
    return () => {
      this.armed.delete(name);
      this.changed();
    };
  }

  /** The read found no node, so it set no watch: the next read sets one. */
  forget(name: string): void {
    this.armed.delete(name);
  }

  /** The session expired, and every watch with it. */
  clear(): void {
    this.armed.clear();
  }
}
