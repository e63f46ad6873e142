/**
 * What the in-memory server and its clients say to each other: requests, replies, and the server's
 * side of a session. In a file of its own so that the client depends on this, not on the server.
 */
import type { ZkStat } from '../zk/native-client.js';
import type { CreateMode, WatchEvent } from '../zk/zk-client-types.js';
import type { OperationScheduler } from './operation-scheduler.js';

/** What a session's owner (the client) hears from the server. */
export interface SessionListener {
  /** The server expired the session: its ephemerals and watches are gone. */
  sessionExpired(): void;
}

/** How the server delivers a watch's event to the client that set it. */
export type WatchDelivery = (event: WatchEvent) => void;

/** An operation a client sends the in-memory server, as `onApplied` and the schedulers see it. */
export type MemoryRequest =
  | {
      readonly op: 'create';
      readonly path: string;
      readonly data: Buffer | null;
      readonly mode: CreateMode;
    }
  | { readonly op: 'exists'; readonly path: string; readonly watch?: WatchDelivery }
  | { readonly op: 'getData'; readonly path: string; readonly watch?: WatchDelivery }
  | { readonly op: 'getChildren'; readonly path: string; readonly watch?: WatchDelivery }
  | {
      readonly op: 'setData';
      readonly path: string;
      readonly data: Buffer | null;
      readonly version: number;
    }
  | { readonly op: 'delete'; readonly path: string; readonly version: number }
  | { readonly op: 'sync'; readonly path: string };

/** What each operation of MemoryRequest answers when it succeeds, by its `op`. */
export interface MemoryResults {
  create: string;
  exists: ZkStat | undefined;
  getData: { stat: ZkStat; data: Buffer | null };
  getChildren: { children: string[]; stat: ZkStat };
  setData: ZkStat;
  delete: undefined;
  sync: undefined;
}

/** The server's answer to one operation: its result, or ZooKeeper's result code when it failed. */
export type MemoryReply<T> =
  { readonly ok: true; readonly value: T } | { readonly ok: false; readonly rc: number };

/** How one operation is applied. */
export interface ApplyOptions {
  /**
   * Its reply will be lost: the server the session is connected to need not have applied a write
   * yet (on a real ensemble the connection may drop before the commit reaches that follower).
   */
  readonly replyLost?: boolean;
}

/** The server as a client uses it. */
export interface MemoryServer {
  readonly scheduler: OperationScheduler;
  openSession(clientName: string, listener: SessionListener): string;
  closeSession(sessionId: string): void;
  expireSession(sessionId: string): void;
  isAlive(sessionId: string): boolean;
  apply<R extends MemoryRequest>(
    sessionId: string,
    request: R,
    options?: ApplyOptions,
  ): MemoryReply<MemoryResults[R['op']]>;
}
