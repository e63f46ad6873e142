import type { ZkAuthError } from '../errors/zk-auth-error.js';
import type { AclEntry, ZkAuth } from './acl.js';

/**
 * How a znode is created.
 *
 * @category ZooKeeper client
 */
export type CreateMode =
  'persistent' | 'ephemeral' | 'persistent-sequential' | 'ephemeral-sequential';

/**
 * Connection state, after Curator: `suspended` means disconnected with the session possibly
 * alive (stop claiming), `expired` means the session and all its ephemeral nodes are gone.
 *
 * @category ZooKeeper client
 */
export type SessionState = 'connecting' | 'connected' | 'suspended' | 'expired' | 'closed';

/**
 * One ZooKeeper session of a client; `generation` grows by one each time a new session replaces an expired one.
 *
 * @category ZooKeeper client
 */
export interface ZkSession {
  readonly generation: number;
  readonly id: string;
}

/**
 * What fired a one-shot watch (`path` is the watched node); `session-lost` means the connection dropped or the session expired first.
 *
 * @category ZooKeeper client
 */
export interface WatchEvent {
  readonly type: 'created' | 'deleted' | 'changed' | 'child' | 'session-lost';
  readonly path: string;
}

/**
 * Called once when a watch fires (ZooKeeper's watches are one-shot).
 *
 * @category ZooKeeper client
 */
export type Watcher = (event: WatchEvent) => void;

/**
 * What a ZkClient connects with: servers, timeouts, credentials and the ACL of the nodes it creates (ConnectOptions resolved).
 *
 * @category ZooKeeper client
 */
export interface ZkClientOptions {
  /** Comma-separated host:port list. */
  readonly connect: string;
  /** The session timeout asked of the servers, in ms. */
  readonly sessionTimeoutMs: number;
  /** How long `connect` (and each reconnect after expiry) may wait for a server. */
  readonly connectTimeoutMs: number;
  /**
   * Credentials added (`add_auth`) to every session this client opens, the first and each one
   * after an expiry, before the session is announced: no operation ever goes through an
   * unauthenticated session. @defaultValue none
   */
  readonly auth?: readonly ZkAuth[];
  /** ACL given to every node this client creates (see `create`). @defaultValue none: ZooKeeper's open ACL */
  readonly acl?: readonly AclEntry[];
}

/**
 * The events a ZooKeeper client emits: its connection state, and each session it starts or loses.
 *
 * @category ZooKeeper client
 */
export interface ZkClientEvents {
  state: [SessionState];
  'session:started': [ZkSession];
  'session:expired': [ZkSession];
  /** A new session (after an expiry) could not authenticate: the client closed itself. */
  'auth:failed': [ZkAuthError];
}

/**
 * Options of a write: what guards it against landing where its caller did not mean it to.
 *
 * @category ZooKeeper client
 */
export interface WriteOptions {
  /** The write fails with SESSION_EXPIRED unless this session is still the current one, also when it is sent again after a connection loss. */
  readonly fence?: ZkSession;
  /**
   * The czxid of the node a setData or delete was decided on (from the stat read before it). A node
   * deleted and created again starts over at version 0, so a versioned write sent again after a lost
   * reply could land on the new node; with `incarnation`, it is sent again only after a sync shows
   * the same node still there (else it fails NO_NODE, `retried` set), and a setData that lands on
   * another node fails NODE_REPLACED. See docs/design/writes.md.
   */
  readonly incarnation?: number;
  /**
   * For a create whose effect must not happen twice (a task's `ready`: a second one after the task
   * ran and its `ready` was deleted would run it again): asked, after a sync, before the create is
   * sent again after a connection loss. False when the state it was decided on has moved on, which
   * means its first try landed: it is then not sent again, and fails NODE_EXISTS with `retried` set.
   */
  readonly stillWanted?: () => Promise<boolean>;
}

/**
 * Counts of operations sent, for benchmarks and metrics.
 *
 * @category ZooKeeper client
 */
export interface ZkOperationCounts {
  reads: number;
  writes: number;
}
