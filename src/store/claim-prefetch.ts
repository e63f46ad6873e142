import { ARG_PREFIX, PROV_PREFIX, hasSequentialName } from '../zk/layout.js';

/** How many dependents' listings a process keeps for their claims: the oldest go first. */
export const PREDICTED_LISTINGS_LIMIT = 10_000;

/**
 * The reads a claim sends right behind its create, beyond the task's children and definition: the
 * task's ACL and, when this process just handed the task its last input, the values of its inputs
 * and links as that hand-on's listing named them. They travel in the claim's round trip, so a task
 * made runnable here starts without another one. Each is read after the create (the session keeps
 * the order), so it sees the task as the claim left it; the worker still checks the names against
 * the listing read behind the claim and reads what that listing names and this did not.
 */
export interface PrefetchedInputs {
  /** The task's ACL check (Zk.assertOwnAcl), settled without throwing: an error is kept. */
  readonly ownAcl: Promise<void | PrefetchError>;
  /** Encoded values of `arg-N` children, by child name. */
  readonly values: ReadonlyMap<string, Promise<Buffer | undefined | PrefetchError>>;
  /** The dep paths of `prov-N` children, by child name. */
  readonly links: ReadonlyMap<string, Promise<string | undefined | PrefetchError>>;
}

/**
 * A read error kept for later: whether it matters depends on what else the task holds (a
 * definition), or the read is made again where it is needed (inputs, links, ACL).
 */
export class PrefetchError {
  constructor(readonly error: unknown) {}
}

/** Settles a prefetched read without an unhandled rejection: a failure becomes a PrefetchError. */
export function settledRead<T>(read: Promise<T>): Promise<T | PrefetchError> {
  return read.catch((error: unknown) => new PrefetchError(error));
}

/** The names among a predicted listing whose values a claim prefetches: inputs and links. */
export function prefetchedNames(children: readonly string[]): {
  args: string[];
  provs: string[];
} {
  return {
    args: children.filter((name) => hasSequentialName(name, ARG_PREFIX)),
    provs: children.filter((name) => hasSequentialName(name, PROV_PREFIX)),
  };
}

/**
 * The last listing this process read of each dependent it made runnable (pure, bounded): what its
 * claim prefetches. Taken once, by the claim that follows; one never taken (another process claimed
 * the task) goes when newer ones push it out.
 */
export class PredictedListings {
  private readonly listings = new Map<string, readonly string[]>();

  constructor(private readonly limit = PREDICTED_LISTINGS_LIMIT) {}

  remember(task: string, children: readonly string[]): void {
    this.listings.delete(task);
    this.listings.set(task, children);
    for (const oldest of this.listings.keys()) {
      if (this.listings.size <= this.limit) break;
      this.listings.delete(oldest);
    }
  }

  /** The listing remembered for the task, forgotten as it is taken. */
  take(task: string): readonly string[] | undefined {
    const children = this.listings.get(task);
    this.listings.delete(task);
    return children;
  }

  get size(): number {
    return this.listings.size;
  }
}
