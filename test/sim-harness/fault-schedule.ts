/**
 * The faults every simulation injects, as the server sees them: a process that dies, one that stops
 * (a GC pause, a stopped VM), one cut off from ZooKeeper while its code runs on. In each the server
 * stops hearing from the process and, after a while, expires its session. How long that while is
 * differs: the schedule and job simulations expire the session at once (their time moves in steps
 * much longer than a session timeout), the plan simulation after its workload's session timeout, as
 * a real server notices. When the faults fire is the same in each: before a step of the client they
 * hit, at the simulation's fault rate, while its fault window lasts (settle-operations.ts for the
 * schedule and job simulations, the driver loop of test/simulation); then the faults stop, clocks
 * agree, everyone wakes and the cluster settles before the final checks. Which kinds a simulation
 * draws, and how often, is its own (the draws are part of its seeds).
 */
import type { MemoryZkClient, MemoryZooKeeper } from '../../src/testing/index.js';

/** When the server expires the session of a process it no longer hears from. */
export interface Expiry {
  /** 0 (the default): at once. A session timeout: on a timer, as a real server notices. */
  readonly afterMs?: number;
  /** Runs once the server expired the session (a replacement process starts, a note is made). */
  readonly then?: () => void;
}

/** The server expires `sessionId` as `expiry` says; `then` runs even when the process had no session left. */
export function expireSession(
  server: MemoryZooKeeper,
  sessionId: string | undefined,
  expiry: Expiry = {},
): void {
  const expire = (): void => {
    if (sessionId !== undefined) server.expireSession(sessionId);
    expiry.then?.();
  };
  const afterMs = expiry.afterMs ?? 0;
  if (afterMs === 0) expire();
  else setTimeout(expire, afterMs);
}

/** The process dies: nothing it sent after this lands, and the server expires its session (at once unless told). */
export function crashAndExpire(server: MemoryZooKeeper, zk: MemoryZkClient, expiry?: Expiry): void {
  const sessionId = zk.sessionId;
  zk.crash();
  expireSession(server, sessionId, expiry);
}

/**
 * The process stops (a GC pause, a stopped VM): nothing of its lands, and the server expires its
 * session (at once unless told). It hears of the expiry only when it wakes, as a frozen process would.
 */
export function freezeAndExpire(
  server: MemoryZooKeeper,
  zk: MemoryZkClient,
  expiry?: Expiry,
): void {
  const sessionId = zk.sessionId;
  zk.freeze();
  expireSession(server, sessionId, expiry);
}

/**
 * The process is cut off from ZooKeeper while its code goes on running, and its session expires (at
 * once unless told): it hears of the expiry only once it reconnects.
 */
export function detachAndExpire(
  server: MemoryZooKeeper,
  zk: MemoryZkClient,
  expiry?: Expiry,
): void {
  const sessionId = zk.sessionId;
  zk.disconnect();
  expireSession(server, sessionId, expiry);
}
