/**
 * The arithmetic of item leases (pure). A holder renews its lease every `leaseMs / 3`; it must stop
 * its items on its own once `leaseMs − marginMs` have passed, by its own monotonic clock, since it
 * *sent* its last renewal that succeeded (the lease cannot have been renewed for longer than that).
 * A new holder may start an item only after the recorded end of the previous lease (`expiresAt`, the
 * previous holder's wall clock at renewal + leaseMs) plus `driftMs`, by its own wall clock — or at
 * once when the previous holder released it.
 *
 * The assumption about clocks: two hosts' wall clocks differ by less than `driftMs`, and no clock
 * runs more than `marginMs / leaseMs` (as a fraction) slow or fast over one lease. Under it, the old
 * holder has stopped before the new one starts, even when the old one is frozen or cut off.
 */

export interface LeaseRecord {
  /** The worker holding the item. */
  readonly holder: string;
  /** The item's fencing token for this holder: greater than every earlier holder's. */
  readonly token: number;
  /** When the lease ends unless renewed: the holder's wall clock at its renewal + leaseMs (ms since the epoch). */
  readonly expiresAt: number;
  /** Set when the holder let it go: the next holder may start at once. */
  readonly released?: boolean;
}

export interface LeaseTiming {
  readonly leaseMs: number;
  /** How long before the lease's end a holder that could not renew stops. */
  readonly marginMs: number;
  /** The most two hosts' wall clocks are assumed to differ. */
  readonly driftMs: number;
}

/** When a holder must have stopped, by its monotonic clock, given when it sent its last successful renewal. */
export function stopDeadline(
  lastRenewalSentAt: number,
  timing: Pick<LeaseTiming, 'leaseMs' | 'marginMs'>,
): number {
  return lastRenewalSentAt + timing.leaseMs - timing.marginMs;
}

/** Whether a new holder may start the item now, or how long it must wait first. */
export function takeOver(
  lease: LeaseRecord | undefined,
  newHolder: string,
  now: number,
  timing: Pick<LeaseTiming, 'driftMs'>,
): { readonly wait: number } {
  if (lease === undefined || lease.released === true || lease.holder === newHolder)
    return { wait: 0 };
  return { wait: Math.max(0, lease.expiresAt + timing.driftMs - now) };
}

/** The lease a holder writes when it takes or renews an item. */
export function leaseFor(
  holder: string,
  token: number,
  now: number,
  timing: Pick<LeaseTiming, 'leaseMs'>,
): LeaseRecord {
  return { holder, token, expiresAt: now + timing.leaseMs };
}

/** Checks timing: a margin and a drift that leave the lease some use. */
export function leaseProblem(timing: LeaseTiming): string | undefined {
  const { leaseMs, marginMs, driftMs } = timing;
  if (![leaseMs, marginMs, driftMs].every((value) => Number.isInteger(value) && value >= 0))
    return 'leaseMs, marginMs and driftMs must be whole, non-negative ms';
  if (leaseMs < 300) return `leaseMs must be at least 300 ms, got ${leaseMs}`;
  // At most half: a renewal every leaseMs / 3 then always comes before the holder has to stop.
  if (marginMs * 2 > leaseMs)
    return `marginMs (${marginMs}) must be at most half of leaseMs (${leaseMs})`;
  return undefined;
}

/** What a lease reader knows of the lease's node besides its record: its stat's zxids and last change time. */
export interface LeaseNode {
  /** The zxid that created the node: a node deleted and created again has a higher one. */
  readonly czxid: number;
  /** The zxid of the node's last write. */
  readonly mzxid: number;
  /** When the node was last written, by the ZooKeeper server's clock (ms since the epoch). */
  readonly mtime: number;
}

/**
 * Whether the record was written on an earlier node at the lease's path (deleted when its item left
 * the pool, and created again since): a take, renewal or release decided on that node and landed
 * late on this one. Every genuine record has a token above its node's creation zxid (the token is
 * one more than the zxid of a version of this very node), but the placeholder a node is created
 * with; a stray's token comes from the earlier node, whose every zxid is below this one's.
 */
export function isStrayLease(record: LeaseRecord, node: LeaseNode): boolean {
  return node.mzxid !== node.czxid && record.token <= node.czxid;
}

/**
 * The lease to go by. A stray overwrote whatever the holder of this node wrote, which may still be
 * at work: its renewal fails at once (the version moved), but until then it has not stopped. It
 * stops at the latest `leaseMs` after its last renewal, which came before the stray landed, so the
 * stray counts as a lease of nobody known that ends `leaseMs` after it was written.
 */
export function effectiveLease(
  record: LeaseRecord,
  node: LeaseNode,
  timing: Pick<LeaseTiming, 'leaseMs'>,
): LeaseRecord {
  if (!isStrayLease(record, node)) return record;
  return { holder: '', token: record.token, expiresAt: node.mtime + timing.leaseMs };
}
