import { watchEventTypeOf } from './native-client.js';
import type { Watcher } from './zk-client-types.js';

/** Which call set a watch: it decides which events reach it. */
export type WatchKind = 'exists' | 'data' | 'child';

interface Registration {
  readonly kind: WatchKind;
  readonly watcher: Watcher;
}

/** The events each kind of watch receives (ZooKeeper's: child events only for child watches; deletion for all). */
const RECEIVES: Readonly<Record<ReturnType<typeof watchEventTypeOf>, ReadonlySet<WatchKind>>> = {
  created: new Set<WatchKind>(['exists']),
  changed: new Set<WatchKind>(['exists', 'data']),
  deleted: new Set<WatchKind>(['exists', 'data', 'child']),
  child: new Set<WatchKind>(['child']),
  'session-lost': new Set<WatchKind>(['exists', 'data', 'child']),
};

/**
 * The client side of ZooKeeper watches. node-zookeeper keeps every watcher function it is given
 * for ever (its watcher callbacks are never freed), so whatever a watcher closes over would leak
 * with each watch set. Instead the native client gets one shared function, and the watchers live
 * here, by path, until they fire once or the session ends.
 */
export class WatchRegistry {
  private readonly byPath = new Map<string, Set<Registration>>();

  /** The one function handed to the native client for every watch. */
  readonly nativeCallback = (type: number, _state: number, path: string): void => {
    const event = watchEventTypeOf(type);
    if (event === 'session-lost') this.loseAll();
    else this.fire(path, event);
  };

  /** Registers a watcher before its call is sent; returns the handle to drop it when the call set no watch. */
  add(path: string, kind: WatchKind, watcher: Watcher): Registration {
    const registration: Registration = { kind, watcher };
    let registrations = this.byPath.get(path);
    if (registrations === undefined) {
      registrations = new Set();
      this.byPath.set(path, registrations);
    }
    registrations.add(registration);
    return registration;
  }

  /** Drops a registration whose call failed (ZooKeeper set no watch then). */
  remove(path: string, registration: Registration): void {
    const registrations = this.byPath.get(path);
    if (registrations === undefined) return;
    registrations.delete(registration);
    if (registrations.size === 0) this.byPath.delete(path);
  }

  /** Every watch fires `session-lost`: the connection dropped or the session ended (ZooKeeper's session event). */
  loseAll(): void {
    const all = [...this.byPath].flatMap(([path, registrations]) =>
      [...registrations].map((registration) => ({ path, registration })),
    );
    this.byPath.clear();
    for (const { path, registration } of all) call(registration.watcher, 'session-lost', path);
  }

  /** Forgets every watcher without calling it (the client closed). */
  clear(): void {
    this.byPath.clear();
  }

  /** How many watchers wait (for leak checks). */
  get size(): number {
    let size = 0;
    for (const registrations of this.byPath.values()) size += registrations.size;
    return size;
  }

  private fire(
    path: string,
    type: Exclude<ReturnType<typeof watchEventTypeOf>, 'session-lost'>,
  ): void {
    const registrations = this.byPath.get(path);
    if (registrations === undefined) return;
    const due = [...registrations].filter((registration) => RECEIVES[type].has(registration.kind));
    for (const registration of due) registrations.delete(registration);
    if (registrations.size === 0) this.byPath.delete(path);
    for (const registration of due) call(registration.watcher, type, path);
  }
}

function call(watcher: Watcher, type: ReturnType<typeof watchEventTypeOf>, path: string): void {
  try {
    watcher({ type, path });
  } catch {
    // a watcher that throws must not keep the others from hearing of the event
  }
}
