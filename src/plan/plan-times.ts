/**
 * When a plan was made and when it ended, from what reading it already gives: the plan node's
 * ctime (ZooKeeper's clock, set once when the node is created) and the end times of its tasks and
 * of its cancel (the workers' and the canceller's clocks). No extra read, no stored timestamp.
 */
import type { PlanControlRecord } from '../control/control-record.js';
import type { PlanState } from './plan-states.js';

/** A plan's times, each absent when it cannot be told. */
export interface PlanTimes {
  /** When the plan's node was created (ZooKeeper's clock). */
  readonly createdAt?: Date;
  /** When it ended: completed, failed or cancelled, and the time of that end can be read. */
  readonly finishedAt?: Date;
}

/** Plan states after which nothing more runs. */
const ENDED_STATES: ReadonlySet<PlanState> = new Set(['completed', 'failed', 'cancelled']);

/** A date a reader can trust to format: a real Date with a finite time, else undefined. */
function validDate(value: unknown): Date | undefined {
  return value instanceof Date && Number.isFinite(value.getTime()) ? value : undefined;
}

/**
 * The plan's times. `createdAt` is the plan node's ctime. An ended plan's `finishedAt` is the
 * latest end among its tasks (a finished, failed or cancelled task's `finishedAt`), or its cancel's
 * time when that is later (a cancel can end a plan whose tasks never ran). A completed plan that
 * keeps no history has no task left to tell its end: none then.
 */
export function planTimes(
  state: PlanState,
  ctime: unknown,
  taskEnds: readonly (Date | undefined)[],
  control: PlanControlRecord | undefined,
): PlanTimes {
  const createdAt = validDate(ctime);
  if (!ENDED_STATES.has(state)) return createdAt === undefined ? {} : { createdAt };
  let latest = -Infinity;
  for (const end of taskEnds) {
    const at = validDate(end)?.getTime();
    if (at !== undefined && at > latest) latest = at;
  }
  const cancelledAt = control?.state === 'cancelled' ? validDate(control.at)?.getTime() : undefined;
  if (cancelledAt !== undefined && cancelledAt > latest) latest = cancelledAt;
  return {
    ...(createdAt === undefined ? {} : { createdAt }),
    ...(Number.isFinite(latest) ? { finishedAt: new Date(latest) } : {}),
  };
}
