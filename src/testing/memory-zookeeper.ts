/**
 * An in-memory ZooKeeper ensemble for unit tests and seeded simulations: the znode tree, sessions,
 * their ephemeral nodes and one-shot watches. Clients (`MemoryZkClient`, the `Zk` seam) come from
 * `connect`; when their operations land is up to the `OperationScheduler`. `test/zk-contract.ts`
 * runs the same cases against this and a real server.
 *
 * With `followers`, sessions are spread over the leader and that many followers (memory-view.ts):
 * writes commit on the leader at once, a follower applies them when `catchUp` is called (or when
 * one of its own sessions writes or syncs), and its sessions read what it has applied. Without
 * followers every session reads the leader: reads are linearizable, as in most unit tests.
 */
import type { ZkStat } from '../zk/native-client.js';
import type {
  ApplyOptions,
  MemoryReply,
  MemoryRequest,
  MemoryResults,
  SessionListener,
} from './memory-protocol.js';
import { RC, ZnodeFailure } from './memory-tree.js';
import { MemoryView, type CommittedWrite, type WatchKind } from './memory-view.js';
import { MemoryZkClient } from './memory-zk-client.js';
import { immediateScheduler, type OperationScheduler } from './operation-scheduler.js';

/** A watch the server holds: whose, on which path, of which kind. */
export interface WatchInfo {
  readonly sessionId: string;
  readonly clientName: string;
  readonly path: string;
  readonly kind: WatchKind;
}

/** A live session as `sessions()` shows it. */
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

/** Options of a MemoryZooKeeper: when operations land, its clock, and how many followers it has. */
export interface MemoryZooKeeperOptions {
  /** When operations land. @defaultValue `immediateScheduler` */
  readonly scheduler?: OperationScheduler;
  /** Milliseconds for ctime/mtime. @defaultValue Date.now */
  readonly clock?: () => number;
  /**
   * Followers beside the leader; new sessions go to the leader and the followers in turn, and a
   * follower's sessions read what it has applied (see `catchUp`). @defaultValue 0
   */
  readonly followers?: number;
}

interface ServerSession {
  readonly id: string;
  readonly clientName: string;
  readonly listener: SessionListener;
  /** The server (index into the views; 0 is the leader) the session is connected to. */
  readonly view: number;
}

/** The operations that go through the leader. */
const WRITES: ReadonlySet<MemoryRequest['op']> = new Set(['create', 'setData', 'delete']);

/** Session ids in the native client's format: unpadded lowercase hex, server id in the top byte. */
const SESSION_ID_BASE = 1n << 56n;

/**
 * An in-memory ZooKeeper for unit tests and seeded simulations: one tree (a leader and, optionally,
 * followers that lag until they catch up), sessions that expire on demand, watches, and an
 * operation scheduler that decides when each operation lands. `connect` gives a MemoryZkClient.
 *
 * Its clients reach it through the MemoryServer protocol, checked where it hands itself to a client
 * (`new MemoryZkClient(this, …)`) rather than by an implements clause, so that the published
 * declaration names no internal protocol type.
 */
export class MemoryZooKeeper {
  readonly scheduler: OperationScheduler;
  /** Called after every applied operation, e.g. to record which value a node got. Must not throw. */
  onApplied: ((event: AppliedOperation) => void) | undefined;
  /** The leader's view first, then the followers'. */
  private readonly views: MemoryView[];
  /** Writes committed so far, for the followers to apply (kept only while there are followers). */
  private readonly committed: CommittedWrite[] = [];
  private readonly liveSessions = new Map<string, ServerSession>();
  private readonly clientNames = new Set<string>();
  private readonly clock: () => number;
  private sessionCount = 0;

  constructor(options: MemoryZooKeeperOptions = {}) {
    this.scheduler = options.scheduler ?? immediateScheduler;
    this.clock = options.clock ?? Date.now;
    const followers = options.followers ?? 0;
    this.views = [
      new MemoryView(this.clock),
      ...Array.from({ length: followers }, () => new MemoryView()),
    ];
  }

  private get leader(): MemoryView {
    return this.views[0] as MemoryView;
  }

  /** A client with a new, connected session. `name` (unique) keys it in `ManualScheduler` and inspection. */
  connect(
    options: { readonly sessionTimeoutMs?: number; readonly name?: string } = {},
  ): MemoryZkClient {
    let name = options.name;
    for (
      let index = this.clientNames.size + 1;
      name === undefined || (options.name === undefined && this.clientNames.has(name));
      index++
    )
      name = `client-${index}`;
    if (this.clientNames.has(name))
      throw new Error(`MemoryZooKeeper: a client named ${name} exists already`);
    this.clientNames.add(name);
    return new MemoryZkClient(this, name, options.sessionTimeoutMs ?? 10_000);
  }

  // ---- followers ----

  /** How many followers there are (server 0 is the leader, 1 … followers are the followers). */
  get followerCount(): number {
    return this.views.length - 1;
  }

  /** How many committed writes follower `server` has not applied yet (0 for the leader). */
  lag(server: number): number {
    return this.committed.length - this.viewAt(server).applied;
  }

  /**
   * Follower `server` applies up to `writes` of the committed writes it lacks (all by default), in
   * order, firing its sessions' watches; resolves how many it applied. Every follower when `server`
   * is undefined.
   */
  catchUp(server?: number, writes = Number.POSITIVE_INFINITY): number {
    if (server === undefined)
      return this.views
        .slice(1)
        .reduce((sum, _view, index) => sum + this.catchUp(index + 1, writes), 0);
    const view = this.viewAt(server);
    let applied = 0;
    while (applied < writes && view.applied < this.committed.length) {
      view.replay(this.committed[view.applied] as CommittedWrite);
      applied += 1;
    }
    return applied;
  }

  /** The server `sessionId` is connected to (0: the leader). */
  serverOf(sessionId: string): number | undefined {
    return this.liveSessions.get(sessionId)?.view;
  }

  // ---- inspection, for tests (no session, no watch, no scheduling; the leader's state) ----

  /** Whether a node exists in the leader's tree, for a test to look (no session, no watch, no scheduling). */
  exists(path: string): boolean {
    return this.leader.tree.has(path);
  }

  /** The node's bytes, undefined when absent. */
  getData(path: string): Buffer | undefined {
    return this.leader.tree.has(path) ? this.leader.tree.data(path) : undefined;
  }

  /** The stat of a node in the leader's tree, undefined when absent (no session, no watch, no scheduling). */
  stat(path: string): ZkStat | undefined {
    return this.leader.tree.has(path) ? this.leader.tree.stat(path) : undefined;
  }

  /** Child names, sorted; [] when absent. */
  children(path: string): string[] {
    return this.leader.tree.has(path) ? this.leader.tree.sortedChildNames(path) : [];
  }

  /** The subtree at `path`, indented, for failure messages. */
  dump(path = '/'): string {
    return this.leader.tree.dump(path);
  }

  /**
   * Watches still registered on the servers: one per session, path and kind, however many calls
   * set it (a real server keeps one watcher per connection and path, as `wchp` shows).
   */
  watches(): WatchInfo[] {
    return this.views
      .flatMap((view) => view.registrations())
      .map(({ sessionId, clientName, path, kind }) => ({ sessionId, clientName, path, kind }));
  }

  /** How many watches are registered on `pathPrefix` or below it (all, without a prefix). */
  watchCount(pathPrefix?: string): number {
    return this.watches().filter(
      ({ path }) =>
        pathPrefix === undefined ||
        path === pathPrefix ||
        path.startsWith(pathPrefix.endsWith('/') ? pathPrefix : `${pathPrefix}/`),
    ).length;
  }

  /** The live sessions with their ephemeral nodes and watch counts, for a test to look. */
  sessions(): SessionInfo[] {
    return [...this.liveSessions.values()].map(({ id, clientName }) => ({
      sessionId: id,
      clientName,
      ephemerals: this.leader.tree.ephemeralsOf(id).sort(),
      watches: this.watches().filter((watch) => watch.sessionId === id).length,
    }));
  }

  /**
   * Expires a session as the server does when it hears nothing within the timeout: its watches fire
   * `session-lost`, its ephemerals go (firing other sessions' watches), and its client is told
   * (a crashed client never is; a disconnected or frozen one finds out when it reconnects or wakes).
   */
  expireSession(sessionId: string): void {
    const session = this.liveSessions.get(sessionId);
    if (session === undefined) return;
    this.liveSessions.delete(sessionId);
    for (const watch of this.viewAt(session.view).dropSession(sessionId))
      for (const deliver of watch.deliveries)
        queueMicrotask(() => deliver({ type: 'session-lost', path: watch.path }));
    this.deleteEphemerals(sessionId);
    session.listener.sessionExpired();
  }

  // ---- the protocol, used by MemoryZkClient ----

  /** @internal Opens a session on the next server in turn and returns its id. */
  openSession(clientName: string, listener: SessionListener): string {
    const number = ++this.sessionCount;
    const id = (SESSION_ID_BASE + BigInt(number)).toString(16);
    this.liveSessions.set(id, { id, clientName, listener, view: number % this.views.length });
    return id;
  }

  /** @internal A client closed its session: ephemerals go at once, watches are dropped unfired. */
  closeSession(sessionId: string): void {
    const session = this.liveSessions.get(sessionId);
    if (session === undefined) return;
    this.liveSessions.delete(sessionId);
    this.viewAt(session.view).dropSession(sessionId);
    this.deleteEphemerals(sessionId);
  }

  /** @internal */
  isAlive(sessionId: string): boolean {
    return this.liveSessions.has(sessionId);
  }

  /** @internal Applies one operation for a live session and answers it. */
  apply<R extends MemoryRequest>(
    sessionId: string,
    request: R,
    options: ApplyOptions = {},
  ): MemoryReply<MemoryResults[R['op']]> {
    const session = this.liveSessions.get(sessionId);
    if (session === undefined) return { ok: false, rc: RC.SESSION_EXPIRED };
    let reply: MemoryReply<MemoryResults[R['op']]>;
    try {
      reply = {
        ok: true,
        value: this.perform(session, request, options) as MemoryResults[R['op']],
      };
    } catch (error) {
      if (!(error instanceof ZnodeFailure)) throw error;
      reply = { ok: false, rc: error.rc };
      // A failed write still goes through the leader (an error transaction): the writer's server
      // answers only once it has applied everything before it, so the writer reads at least that.
      if (WRITES.has(request.op) && session.view !== 0 && options.replyLost !== true)
        this.catchUp(session.view);
    }
    this.tellApplied(session, request, reply);
    return reply;
  }

  private perform(
    session: ServerSession,
    request: MemoryRequest,
    options: ApplyOptions,
  ): MemoryResults[MemoryRequest['op']] {
    const { path } = request;
    const view = this.viewAt(session.view);
    switch (request.op) {
      case 'exists': {
        // On an absent node too: that watch waits for the node to appear.
        if (request.watch)
          view.register(session.id, session.clientName, path, 'exists', request.watch);
        return view.tree.has(path) ? view.tree.stat(path) : undefined;
      }
      case 'getData': {
        const result = { stat: view.tree.stat(path), data: view.tree.data(path) };
        if (request.watch)
          view.register(session.id, session.clientName, path, 'data', request.watch);
        return result;
      }
      case 'getChildren': {
        const result = { children: view.tree.childNames(path), stat: view.tree.stat(path) };
        if (request.watch)
          view.register(session.id, session.clientName, path, 'child', request.watch);
        return result;
      }
      case 'sync':
        if (session.view !== 0) this.catchUp(session.view);
        return undefined;
      case 'create': {
        const created = this.leader.tree.create(path, request.data, request.mode, session.id);
        this.leader.created(created);
        const at = this.leader.tree.stat(created).ctime.getTime();
        this.commit(
          { op: 'create', path, data: request.data, mode: request.mode, owner: session.id, at },
          session,
          options,
        );
        return created;
      }
      case 'setData': {
        const stat = this.leader.tree.setData(path, request.data, request.version);
        this.leader.changed(path);
        this.commit(
          { op: 'setData', path, data: request.data, at: stat.mtime.getTime() },
          session,
          options,
        );
        // The writer's own server has applied it before it answers: the stat is the same there.
        return stat;
      }
      case 'delete': {
        this.leader.tree.delete(path, request.version);
        this.leader.deleted(path);
        this.commit({ op: 'delete', path, at: this.clock() }, session, options);
        return undefined;
      }
    }
  }

  /**
   * Records a write the leader applied, for the followers; the writer's own server applies it
   * before the reply (unless the reply is lost: then it may not have yet).
   */
  private commit(
    write: CommittedWrite,
    writer: ServerSession | undefined,
    options: ApplyOptions = {},
  ): void {
    if (this.views.length === 1) {
      this.leader.applied += 1;
      return;
    }
    this.committed.push(write);
    this.leader.applied = this.committed.length;
    if (writer !== undefined && writer.view !== 0 && options.replyLost !== true)
      this.catchUp(writer.view);
  }

  private viewAt(server: number): MemoryView {
    const view = this.views[server];
    if (view === undefined)
      throw new Error(`MemoryZooKeeper: no server ${server} (followers: ${this.views.length - 1})`);
    return view;
  }

  private tellApplied(
    session: ServerSession,
    request: MemoryRequest,
    reply: MemoryReply<unknown>,
  ): void {
    if (this.onApplied === undefined) return;
    // Field by field, in the order of AppliedOperation, with no small objects spread: this runs for
    // every operation of a simulation.
    const event: { -readonly [K in keyof AppliedOperation]?: AppliedOperation[K] } = {
      clientName: session.clientName,
      sessionId: session.id,
      op: request.op,
      path: request.path,
    };
    if (request.op === 'create' && reply.ok) event.createdPath = reply.value as string;
    const data = request.op === 'create' || request.op === 'setData' ? request.data : undefined;
    if (data !== undefined) event.data = data;
    event.ok = reply.ok;
    if (!reply.ok) event.rc = reply.rc;
    this.onApplied(event as AppliedOperation);
  }

  private deleteEphemerals(sessionId: string): void {
    for (const path of this.leader.tree.ephemeralsOf(sessionId)) {
      this.leader.tree.delete(path, -1);
      this.leader.deleted(path);
      this.commit({ op: 'delete', path, at: this.clock() }, undefined);
    }
  }
}
