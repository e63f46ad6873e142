/**
 * What one check of a sub-plan task does with what it read of its child plan (pure): make the
 * child, finish a child a dead check left half-built, wait, complete, or fail for good.
 */
import { failedList } from '../dependent/dependency-decision.js';

/** How the child plan stands, as read by one check. */
export type ChildSeen =
  | { readonly exists: false }
  | {
      readonly exists: true;
      /** The child's node names this task as the one that made it. */
      readonly ours: boolean;
      /** Who made it instead, as its node says (for the message). */
      readonly madeBy?: string;
      /** Marked ready: every task, its spec record and `ready` are in place. */
      readonly ready: boolean;
      /** Its tasks not finished yet (task nodes left). */
      readonly tasksLeft: number;
      /** Its control record's state, while paused or cancelled. */
      readonly control?: 'paused' | 'cancelled';
      /** Read only when the child may have failed (its `failed` marker is there): whether it did, and what failed. */
      readonly failed?: readonly string[];
    };

/** What the task's own record (`<plan>/sub-plans/task-N`) says: whether the child was made once. */
export interface RecordSeen {
  readonly created: boolean;
}

export type SubPlanStep =
  | { readonly kind: 'build' }
  | { readonly kind: 'refill' }
  | { readonly kind: 'wait'; readonly reason: string }
  | { readonly kind: 'done' }
  | { readonly kind: 'fail'; readonly reason: string };

/** The step for what was seen of `child`. */
export function decideSubPlan(child: string, record: RecordSeen, seen: ChildSeen): SubPlanStep {
  if (!seen.exists)
    // Made once and gone now: it ran and was deleted (retention, a user), or was deleted half-built.
    // Made again, it would run a second time: whether the first run completed is not known.
    return record.created
      ? {
          kind: 'fail',
          reason: `its child plan ${child} was deleted before this task saw it complete; rerun the plan from this task to make a new one`,
        }
      : { kind: 'build' };
  if (!seen.ours)
    return {
      kind: 'fail',
      reason: `the path of its child plan, ${child}, is taken by ${seen.madeBy ?? 'a plan no sub-plan task made'}; give the sub-plan another parent`,
    };
  if (!seen.ready) return { kind: 'refill' };
  if (seen.control === 'cancelled')
    return { kind: 'fail', reason: `its child plan ${child} was cancelled` };
  if (seen.failed !== undefined)
    return { kind: 'fail', reason: `its child plan ${child} failed${failedList(seen.failed)}` };
  // Every task finished: a pause that landed after the last one stops nothing.
  if (seen.tasksLeft === 0) return { kind: 'done' };
  if (seen.control === 'paused')
    return { kind: 'wait', reason: `its child plan ${child} is paused (resume it to go on)` };
  return {
    kind: 'wait',
    reason: `its child plan ${child} is running (${seen.tasksLeft} task(s) left)`,
  };
}
