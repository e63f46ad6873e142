/**
 * An in-memory ZooKeeper server for unit tests and seeded simulations: the znode tree, sessions,
 * their ephemeral nodes and one-shot watches. Clients (`MemoryZkClient`, the `Zk` seam) come from
 * `connect`; when their operations land is up to the `OperationScheduler`. `test/zk-contract.ts`
 * runs the same cases against this and a real server.
 */
import type { ZkStat } from '../zk/native-client.js';
import type { WatchEvent } from '../zk/zk-client-types.js';
import type { MemoryReply, MemoryRequest, MemoryResults, MemoryServer, SessionListener, WatchDelivery } from './memory-protocol.js';
import { MemoryTree, RC, ZnodeFailure, parentPathOf } from './memory-tree.js';
import { MemoryZkClient } from './memory-zk-client.js';
import { immediateScheduler, type OperationScheduler } from './scheduler.js';

/** Which call set a watch: `exists` (also on an absent node), `getData` (`data`) or `getChildren` (`child`). */
export type WatchKind = 'data' | 'exists' | 'child';

export interface WatchInfo {
  readonly sessionId: string;
  readonly clientName: string;
  readonly path: string;
  readonly kind: WatchKind;
}

export interface SessionInfo {
  readonly sessionId: string;
  readonly clientName: string;
  /** Paths of its ephemeral nodes, sorted. */
  readonly ephemerals: string[];
  readonly watches: number;
}

/** Told after every operation the server applied (not those answered without reaching it). */
export interface AppliedOperation {
  readonly clientName: string;
  readonly sessionId: string;
  readonly op: MemoryRequest['op'];
  readonly path: string;
  /** The path a successful create made (with the serial, for a sequential mode). */
  readonly createdPath?: string;
  /** The value a create or setData sent. */
  readonly data?: Buffer | null;
  readonly ok: boolean;
  /** The result code when not ok. */
  readonly rc?: number;
}

export type { MemoryReply, MemoryRequest, MemoryResults, SessionListener } from './memory-protocol.js';

export interface MemoryZooKeeperOptions {
  /** When operations land. @defaultValue `immediateScheduler` */
  readonly scheduler?: OperationScheduler;
  /** Milliseconds for ctime/mtime. @defaultValue Date.now */
  readonly clock?: () => number;
}

interface WatchRegistration extends WatchInfo {
  readonly deliver: WatchDelivery;
}

interface ServerSession {
  readonly id: string;
  readonly clientName: string;
  readonly listener: SessionListener;
}

/** Session ids in the native client's format: unpadded lowercase hex, server id in the top byte. */
const SESSION_ID_BASE = 1n << 56n;

export class MemoryZooKeeper implements MemoryServer {
  readonly scheduler: OperationScheduler;
  /** Called after every applied operation, e.g. to record which value a node got. Must not throw. */
  onApplied: ((event: AppliedOperation) => void) | undefined;
  private readonly tree: MemoryTree;
  private readonly liveSessions = new Map<string, ServerSession>();
  private readonly watchesByPath = new Map<string, WatchRegistration[]>();
  private readonly clientNames = new Set<string>();
  private sessionCount = 0;

  constructor(options: MemoryZooKeeperOptions = {}) {
    this.scheduler = options.scheduler ?? immediateScheduler;
    this.tree = new MemoryTree(options.clock ?? Date.now);
  }

  /** A client with a new, connected session. `name` (unique) keys it in `ManualScheduler` and inspection. */
  connect(options: { readonly sessionTimeoutMs?: number; readonly name?: string } = {}): MemoryZkClient {
    let name = options.name;
    for (let index = this.clientNames.size + 1; name === undefined || (options.name === undefined && this.clientNames.has(name)); index++)
      name = `client-${index}`;
    if (this.clientNames.has(name)) throw new Error(`MemoryZooKeeper: a client named ${name} exists already`);
    this.clientNames.add(name);
    return new MemoryZkClient(this, name, options.sessionTimeoutMs ?? 10_000);
  }

  // ---- inspection, for tests (no session, no watch, no scheduling) ----

  exists(path: string): boolean {
    return this.tree.has(path);
  }

  /** The node's bytes, undefined when absent. */
  getData(path: string): Buffer | undefined {
    return this.tree.has(path) ? this.tree.data(path) : undefined;
  }

  stat(path: string): ZkStat | undefined {
    return this.tree.has(path) ? this.tree.stat(path) : undefined;
  }

  /** Child names, sorted; [] when absent. */
  children(path: string): string[] {
    return this.tree.has(path) ? this.tree.sortedChildNames(path) : [];
  }

  /** The subtree at `path`, indented, for failure messages. */
  dump(path = '/'): string {
    return this.tree.dump(path);
  }

  /** Watches still registered on the server (one entry per call that set one). */
  watches(): WatchInfo[] {
    return [...this.watchesByPath.values()].flat().map(({ sessionId, clientName, path, kind }) => ({ sessionId, clientName, path, kind }));
  }

  /** How many watches are registered on `pathPrefix` or below it (all, without a prefix). */
  watchCount(pathPrefix?: string): number {
    return this.watches().filter(
      ({ path }) => pathPrefix === undefined || path === pathPrefix || path.startsWith(pathPrefix.endsWith('/') ? pathPrefix : `${pathPrefix}/`),
    ).length;
  }

  sessions(): SessionInfo[] {
    return [...this.liveSessions.values()].map(({ id, clientName }) => ({
      sessionId: id,
      clientName,
      ephemerals: this.tree.ephemeralsOf(id).sort(),
      watches: this.watches().filter((watch) => watch.sessionId === id).length,
    }));
  }

  /**
   * Expires a session as the server does when it hears nothing within the timeout: its watches fire
   * `session-lost`, its ephemerals go (firing other sessions' watches), and its client is told
   * (a crashed client never is; a disconnected one finds out when it reconnects).
   */
  expireSession(sessionId: string): void {
    const session = this.liveSessions.get(sessionId);
    if (session === undefined) return;
    this.liveSessions.delete(sessionId);
    this.loseWatches(sessionId);
    this.deleteEphemerals(sessionId);
    session.listener.sessionExpired();
  }

  // ---- the protocol, used by MemoryZkClient ----

  /** @internal Opens a session and returns its id. */
  openSession(clientName: string, listener: SessionListener): string {
    const id = (SESSION_ID_BASE + BigInt(++this.sessionCount)).toString(16);
    this.liveSessions.set(id, { id, clientName, listener });
    return id;
  }

  /** @internal A client closed its session: ephemerals go at once, watches are dropped unfired. */
  closeSession(sessionId: string): void {
    if (!this.liveSessions.delete(sessionId)) return;
    this.dropWatches(sessionId);
    this.deleteEphemerals(sessionId);
  }

  /** @internal */
  isAlive(sessionId: string): boolean {
    return this.liveSessions.has(sessionId);
  }

  /** @internal The connection of a session dropped: each of its watches fires `session-lost` and is gone. */
  loseWatches(sessionId: string): void {
    for (const watch of this.dropWatches(sessionId)) queueMicrotask(() => watch.deliver({ type: 'session-lost', path: '' }));
  }

  /** @internal Applies one operation for a live session and answers it. */
  apply<R extends MemoryRequest>(sessionId: string, request: R): MemoryReply<MemoryResults[R['op']]> {
    const session = this.liveSessions.get(sessionId);
    if (session === undefined) return { ok: false, rc: RC.SESSION_EXPIRED };
    let reply: MemoryReply<MemoryResults[R['op']]>;
    try {
      reply = { ok: true, value: this.perform(session, request) as MemoryResults[R['op']] };
    } catch (error) {
      if (!(error instanceof ZnodeFailure)) throw error;
      reply = { ok: false, rc: error.rc };
    }
    this.tellApplied(session, request, reply);
    return reply;
  }

  private perform(session: ServerSession, request: MemoryRequest): MemoryResults[MemoryRequest['op']] {
    const { path } = request;
    switch (request.op) {
      case 'create': {
        const created = this.tree.create(path, request.data, request.mode, session.id);
        this.fire(created, ['exists', 'data'], 'created');
        this.fire(parentPathOf(created), ['child'], 'child');
        return created;
      }
      case 'exists': {
        // On an absent node too: that watch waits for the node to appear.
        if (request.watch) this.register(session, path, 'exists', request.watch);
        return this.tree.has(path) ? this.tree.stat(path) : undefined;
      }
      case 'getData': {
        const result = { stat: this.tree.stat(path), data: this.tree.data(path) };
        if (request.watch) this.register(session, path, 'data', request.watch);
        return result;
      }
      case 'getChildren': {
        const result = { children: this.tree.childNames(path), stat: this.tree.stat(path) };
        if (request.watch) this.register(session, path, 'child', request.watch);
        return result;
      }
      case 'setData': {
        const stat = this.tree.setData(path, request.data, request.version);
        this.fire(path, ['exists', 'data'], 'changed');
        return stat;
      }
      case 'delete': {
        this.tree.delete(path, request.version);
        this.fireDeleted(path);
        return undefined;
      }
    }
  }

  private tellApplied(session: ServerSession, request: MemoryRequest, reply: MemoryReply<unknown>): void {
    if (this.onApplied === undefined) return;
    const createdPath = request.op === 'create' && reply.ok ? (reply.value as string) : undefined;
    const data = request.op === 'create' || request.op === 'setData' ? request.data : undefined;
    this.onApplied({
      clientName: session.clientName,
      sessionId: session.id,
      op: request.op,
      path: request.path,
      ...(createdPath === undefined ? {} : { createdPath }),
      ...(data === undefined ? {} : { data }),
      ok: reply.ok,
      ...(reply.ok ? {} : { rc: reply.rc }),
    });
  }

  private deleteEphemerals(sessionId: string): void {
    for (const path of this.tree.ephemeralsOf(sessionId)) {
      this.tree.delete(path, -1);
      this.fireDeleted(path);
    }
  }

  private fireDeleted(path: string): void {
    this.fire(path, ['exists', 'data', 'child'], 'deleted');
    this.fire(parentPathOf(path), ['child'], 'child');
  }

  private register(session: ServerSession, path: string, kind: WatchKind, deliver: WatchDelivery): void {
    const registration: WatchRegistration = { sessionId: session.id, clientName: session.clientName, path, kind, deliver };
    const list = this.watchesByPath.get(path);
    if (list === undefined) this.watchesByPath.set(path, [registration]);
    else list.push(registration);
  }

  /** One-shot: the matching watches are removed now and told on a later microtask. */
  private fire(path: string, kinds: readonly WatchKind[], type: WatchEvent['type']): void {
    const list = this.watchesByPath.get(path);
    if (list === undefined) return;
    const fired = list.filter((watch) => kinds.includes(watch.kind));
    const kept = list.filter((watch) => !kinds.includes(watch.kind));
    if (kept.length === 0) this.watchesByPath.delete(path);
    else this.watchesByPath.set(path, kept);
    for (const watch of fired) queueMicrotask(() => watch.deliver({ type, path }));
  }

  private dropWatches(sessionId: string): WatchRegistration[] {
    const dropped: WatchRegistration[] = [];
    for (const [path, list] of this.watchesByPath) {
      const kept = list.filter((watch) => watch.sessionId !== sessionId);
      dropped.push(...list.filter((watch) => watch.sessionId === sessionId));
      if (kept.length === 0) this.watchesByPath.delete(path);
      else this.watchesByPath.set(path, kept);
    }
    return dropped;
  }
}
