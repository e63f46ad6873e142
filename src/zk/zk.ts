/**
 * The seam between zk-plan's engine and ZooKeeper: exactly the operations the plan API, the
 * dispatcher, the worker loop and the task store use. Two implementations keep to it: `ZkClient`
 * (the native client, for real) and `MemoryZooKeeper`'s sessions (in memory, for unit tests and the
 * seeded simulation). `test/zk-contract` runs one suite of cases against both, so they cannot drift.
 *
 * Semantics every implementation keeps (ZooKeeper's own):
 * - **Order.** Operations of one session are applied in the order they were sent and answered in
 *   that order (FIFO); after a connection loss a *prefix* of what was sent has been applied.
 * - **Lost replies.** An operation may fail with `CONNECTION_LOSS` although it was applied.
 *   Operations are sent again once the connection is back, through the same session or, when it
 *   expired meanwhile, through the next one (a repeated create then answers `NODE_EXISTS` with
 *   `ZkError.retried` set, a repeated delete `NO_NODE`); sequential creates are never sent again,
 *   so their caller must find out what happened. A write that must not land in a later session is
 *   fenced (`WriteOptions.fence`); a setData or delete of a node that may be deleted and created
 *   again names the node it was decided on (`WriteOptions.incarnation`). docs/design/writes.md
 *   lists every write zk-plan makes and what guards it.
 * - **Reads may lag.** A session reads from the server it is connected to, which may not have
 *   applied another session's latest write yet, nor this session's own write whose reply was lost
 *   (ZooKeeper promises a session never goes back in time, not that it sees every write at once).
 *   Whoever reads back to settle a lost reply syncs first (`sync`); nothing may rely on reading
 *   another session's write without a watch or a sync.
 * - **Sequential names** end in a ten-digit counter of the children ever created under the parent
 *   (deletions raise `cversion` but not the counter, so the two differ; sort by the name's serial).
 * - **Data** written as `null` reads back as the four bytes `null` (the native client's doing).
 * - **Versions.** `version` counts data changes, `cversion` child creations and deletions.
 * - **Ephemeral nodes** belong to the session that made them and vanish when it expires or is
 *   closed, not when the connection drops. They cannot have children.
 * - **Watches are one-shot** and fire at most once: `created`/`deleted`/`changed` for `exists` and
 *   `getData`, `child`/`deleted` for `getChildren`. A watch set with `exists` on a node that never
 *   appears stays until the session ends. When the connection drops every watcher of the session
 *   hears `session-lost` (and never again): re-read, and re-arm, after it. The server keeps those
 *   watches all the same (the client sets them again when it reconnects), until they fire into
 *   nothing or the session ends; at expiry they go.
 * - **Sessions.** When a session expires, `session:expired` is emitted, then a new session is opened
 *   (`session:started`, with a `generation` one higher). A write fenced by an expired session fails
 *   with `SESSION_EXPIRED` instead of landing through the new one.
 */
import type { EventEmitter } from 'node:events';
import type { ZkStat } from './native-client.js';
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
 * One ZooKeeper client (one session at a time) as the engine sees it.
 *
 * @category ZooKeeper client
 */
export interface Zk extends EventEmitter<ZkClientEvents> {
  /** Operations sent so far, for benchmarks and metrics. */
  readonly counts: ZkOperationCounts;
  readonly state: SessionState;
  /** The current session; throws SESSION_EXPIRED when there is none right now. */
  readonly session: ZkSession;
  /** The session timeout this client asked for, in ms: how long the server keeps a silent session's ephemerals. */
  readonly sessionTimeoutMs: number;
  /** True while `session` is the live session of this client. */
  isCurrent(session: ZkSession): boolean;
  /** Closes the session (its ephemeral nodes go at once); the client cannot be used afterwards. */
  close(): void;

  /** Creates a node and resolves its path (with the serial, for a sequential mode). */
  create(
    path: string,
    data?: Buffer | null,
    mode?: CreateMode,
    options?: WriteOptions,
  ): Promise<string>;
  /** Creates the node unless it exists; true when this call created it. */
  createIfAbsent(
    path: string,
    data?: Buffer | null,
    mode?: CreateMode,
    options?: WriteOptions,
  ): Promise<boolean>;
  /** Creates `path` and its missing ancestors as empty persistent nodes. */
  ensurePath(path: string): Promise<void>;
  /** The node's stat, undefined when absent; `watcher` fires when it is created, changed or deleted. */
  exists(path: string, watcher?: Watcher): Promise<ZkStat | undefined>;
  /** The node's data and stat; NO_NODE when absent. */
  getData(path: string, watcher?: Watcher): Promise<{ stat: ZkStat; data: Buffer | null }>;
  /** Like getData, undefined when absent. */
  tryGetData(path: string): Promise<{ stat: ZkStat; data: Buffer | null } | undefined>;
  /** Child names in no particular order, and the node's stat; NO_NODE when absent. */
  getChildren(path: string, watcher?: Watcher): Promise<{ children: string[]; stat: ZkStat }>;
  /** Like getChildren, undefined when absent (and then no watch is set). */
  tryGetChildren(
    path: string,
    watcher?: Watcher,
  ): Promise<{ children: string[]; stat: ZkStat } | undefined>;
  /** Replaces the node's data if its version is `version` (-1 matches every version); resolves the new stat. */
  setData(
    path: string,
    data: Buffer | null,
    version?: number,
    options?: WriteOptions,
  ): Promise<ZkStat>;
  /** Deletes the node if its version is `version` (-1 matches every version); it must have no children. */
  delete(path: string, version?: number, options?: WriteOptions): Promise<void>;
  /**
   * Makes the server this session reads from catch up with the leader before it answers the next
   * request: a read sent after it sees every write applied before the sync began, other sessions'
   * and this session's own first try of a write whose reply was lost.
   */
  sync(path: string): Promise<void>;
  /** Deletes the node if present (version -1 matches any); true when this call deleted it. */
  deleteIfPresent(path: string, version?: number, options?: WriteOptions): Promise<boolean>;
  /** Deletes a node and everything below it, children first; safe against concurrent deleters. */
  deleteRecursive(path: string): Promise<void>;
  /**
   * Resolves when `path`'s ACL grants nothing beyond the `acl` this client creates nodes with
   * (at once when none is configured, and in memory, which has no ACLs); rejects with
   * ForeignAclError naming `what` (e.g. 'the plan') otherwise. Defence in depth: with ACLs in the
   * create request nobody else can make nodes under a protected parent, but a parent, plan or task
   * made world-open before (another tool, an older zk-plan) is refused, not trusted.
   */
  assertOwnAcl(path: string, what: string): Promise<void>;
}
