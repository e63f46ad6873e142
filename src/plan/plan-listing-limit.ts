/**
 * How many tasks a plan can hold: its child listing (one getChildren reply) must fit in the
 * ensemble's `jute.maxbuffer`, or no worker can list the plan any more and nothing of it runs. A
 * task's node name (`task-` and ten digits) costs 19 bytes in a reply (a 4-byte length and the
 * name); the plan's other children (its runnable index, history, control, builders, batch markers,
 * key records) are few and short, bounded here by a fixed reserve with the reply's header and stat.
 */
import { PlanTooLargeError } from '../errors/plan-errors.js';

/** Bytes of one task's name in a getChildren reply. */
export const LISTING_BYTES_PER_CHILD = 19;
/** Room kept for the reply's header and stat and the plan's children that are not tasks. */
export const LISTING_RESERVE_BYTES = 8 * 1024;

/** The most children a plan's listing may hold under `juteMaxBufferBytes`. */
export function maxPlanChildren(juteMaxBufferBytes: number): number {
  return Math.floor((juteMaxBufferBytes - LISTING_RESERVE_BYTES) / LISTING_BYTES_PER_CHILD);
}

/** Refuses `adding` tasks to a plan of `children` children when its listing would no longer fit. */
export function assertListingFits(
  plan: string,
  children: number,
  adding: number,
  juteMaxBufferBytes: number,
): void {
  const limit = maxPlanChildren(juteMaxBufferBytes);
  if (children + adding > limit)
    throw new PlanTooLargeError(plan, children, adding, limit, juteMaxBufferBytes);
}
