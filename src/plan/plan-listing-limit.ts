/**
 * How many tasks a plan can hold: its child listing (one getChildren reply) must fit in the
 * `jute.maxbuffer` of every client that reads it. zk-plan's native client reads larger replies
 * (120 000 children were listed in a test), but Java clients refuse any reply past their
 * jute.maxbuffer: with ZooKeeper's default, `zkCli.sh ls` of a node with 54 000 task names worked
 * and with 56 000 failed. So by default a plan stays readable by ZooKeeper's own tools and by
 * Curator-based ones. A name costs a 4-byte length and its bytes: a task's (`task-` and ten
 * digits) 19, a kept result's (`result-` and ten digits) 21, and a plan whose tasks keep their
 * results ends with one of those per task; so every child is charged 21. The plan's other children
 * (its runnable index, history, control, builders, batch markers, key records) are few and short,
 * bounded by a fixed reserve with the reply's header and stat.
 */
import { PlanTooLargeError } from '../errors/plan-errors.js';

/** Bytes of the longest name a task leaves in its plan's listing (its kept result's) in a getChildren reply. */
export const LISTING_BYTES_PER_CHILD = 21;
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
