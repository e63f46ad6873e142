/**
 * Trying a release again. A release of something a session holds (a concurrency slot, a lock) can
 * fail while ZooKeeper is unreachable for longer than the client waits. Left held, the slot or
 * lock would keep every other process out until the session ends, which for a long-lived worker is
 * never; once the session has ended, ZooKeeper has freed it with the session's ephemerals.
 */
import type { ZkSession } from './zk-client-types.js';
import type { Zk } from './zk.js';

/** Pause between two tries of a release that failed. */
export const RELEASE_RETRY_MS = 1_000;

/** Runs `release` again every RELEASE_RETRY_MS until it succeeds, while `session` is the client's current one. */
export function retryReleaseWhileSessionLives(
  zk: Zk,
  session: ZkSession,
  release: () => Promise<void>,
): void {
  if (!zk.isCurrent(session) || zk.state === 'closed') return;
  setTimeout(
    () => void release().catch(() => retryReleaseWhileSessionLives(zk, session, release)),
    RELEASE_RETRY_MS,
  ).unref?.();
}
