/**
 * The faults the schedule and job simulations share, as the server sees them. When they fire is the
 * same in each: before a step of the client they hit (settle-operations.ts), at the simulation's
 * fault rate, while its fault window lasts; then the faults stop, clocks agree, everyone wakes and
 * the cluster settles before the final checks. Which kinds a simulation draws, and how often, is its
 * own (the draws are part of its seeds). The plan simulation's faults (test/simulation) differ: a
 * crashed process's session there expires only after the session timeout, as a real server notices.
 */
import type { MemoryZkClient, MemoryZooKeeper } from '../../src/testing/index.js';

/** The process dies, and the server expires its session at once: its ephemeral nodes go now. */
export function crashAndExpire(server: MemoryZooKeeper, zk: MemoryZkClient): void {
  const sessionId = zk.sessionId;
  zk.crash();
  if (sessionId !== undefined) server.expireSession(sessionId);
}

/**
 * The process stops (a GC pause, a stopped VM): nothing of its lands, and the server expires its
 * session at once. It hears of the expiry only when it wakes, as a frozen process would.
 */
export function freezeAndExpire(server: MemoryZooKeeper, zk: MemoryZkClient): void {
  const sessionId = zk.sessionId;
  zk.freeze();
  if (sessionId !== undefined) server.expireSession(sessionId);
}

/**
 * The process is cut off from ZooKeeper while its code goes on running, and its session expires: it
 * hears of the expiry only once it reconnects.
 */
export function detachAndExpire(server: MemoryZooKeeper, zk: MemoryZkClient): void {
  const sessionId = zk.sessionId;
  zk.disconnect();
  if (sessionId !== undefined) server.expireSession(sessionId);
}
