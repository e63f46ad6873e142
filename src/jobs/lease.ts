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
export function stopDeadline(lastRenewalSentAt: number, timing: Pick<LeaseTiming, 'leaseMs' | 'marginMs'>): number {
  return lastRenewalSentAt + timing.leaseMs - timing.marginMs;
}

/** Whether a new holder may start the item now, or how long it must wait first. */
export function takeOver(lease: LeaseRecord | undefined, newHolder: string, now: number, timing: Pick<LeaseTiming, 'driftMs'>): { readonly wait: number } {
  if (lease === undefined || lease.released === true || lease.holder === newHolder) return { wait: 0 };
  return { wait: Math.max(0, lease.expiresAt + timing.driftMs - now) };
}

/** The lease a holder writes when it takes or renews an item. */
export function leaseFor(holder: string, token: number, now: number, timing: Pick<LeaseTiming, 'leaseMs'>): LeaseRecord {
  return { holder, token, expiresAt: now + timing.leaseMs };
}

/** Checks timing: a margin and a drift that leave the lease some use. */
export function leaseProblem(timing: LeaseTiming): string | undefined {
  const { leaseMs, marginMs, driftMs } = timing;
  if (![leaseMs, marginMs, driftMs].every((value) => Number.isInteger(value) && value >= 0))
    return 'leaseMs, marginMs and driftMs must be whole, non-negative ms';
  if (leaseMs < 300) return `leaseMs must be at least 300 ms, got ${leaseMs}`;
  // At most half: a renewal every leaseMs / 3 then always comes before the holder has to stop.
  if (marginMs * 2 > leaseMs) return `marginMs (${marginMs}) must be at most half of leaseMs (${leaseMs})`;
  return undefined;
}
