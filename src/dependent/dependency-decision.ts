/**
 * What a dependent task does with what it saw of the plan it waits for (pure): complete, wait
 * again, or fail for good.
 */
import type { PlanState } from '../plan/plan-states.js';
import type { TickState } from '../schedule/tick-record.js';

/** How the awaited plan stands, as read: absent, or its state with what failed in it. */
export type PlanSeen =
  | { readonly exists: false }
  | {
      readonly exists: true;
      readonly state: PlanState;
      readonly done: number;
      readonly total: number;
      /** Tasks that failed for good: by key where they have one. */
      readonly failed: readonly string[];
    };

/** What a dependent task saw. */
export type DependencySeen =
  | { readonly kind: 'plan'; readonly plan: string; readonly seen: PlanSeen }
  | {
      readonly kind: 'tick';
      readonly schedule: string;
      /** The schedule is not there (not put yet, or removed). */
      readonly scheduleMissing?: boolean;
      /** The newest cron tick at or before the moment; undefined when the cron has none. */
      readonly tick?: number;
      /** The moment the dependency names. */
      readonly at: number;
      /** The tick's record, when it has one. */
      readonly record?: { readonly state: TickState; readonly reason?: string };
      /** The tick's plan path, and how that plan stands. */
      readonly plan?: string;
      readonly seen?: PlanSeen;
    };

/**
 * `{ plan, state: 'completed' }` is what a dependent task hands its dependents.
 *
 * @category Plans and tasks
 */
export interface DependencyResult {
  readonly plan: string;
  readonly state: 'completed';
  /** For a schedule's run: the tick, ISO-8601. */
  readonly tick?: string;
}

export type DependencyOutcome =
  | { readonly kind: 'done'; readonly value: DependencyResult }
  | { readonly kind: 'wait'; readonly reason: string }
  | { readonly kind: 'fail'; readonly reason: string };

/** The failed tasks a message names: the first few, then how many more. */
const LISTED_FAILED = 5;

/** ` (failed: a, b, … and n more)`, or nothing when none failed: how a plan's failure is named. */
export function failedList(failed: readonly string[]): string {
  if (failed.length === 0) return '';
  const more = failed.length > LISTED_FAILED ? ` and ${failed.length - LISTED_FAILED} more` : '';
  return ` (failed: ${failed.slice(0, LISTED_FAILED).join(', ')}${more})`;
}

function fromPlan(plan: string, seen: PlanSeen, tick?: string): DependencyOutcome {
  if (!seen.exists) return { kind: 'wait', reason: `plan ${plan} does not exist (yet)` };
  const at = tick === undefined ? {} : { tick };
  switch (seen.state) {
    case 'completed':
      return { kind: 'done', value: { plan, state: 'completed', ...at } };
    case 'failed':
      return { kind: 'fail', reason: `plan ${plan} failed${failedList(seen.failed)}` };
    case 'cancelled':
      return { kind: 'fail', reason: `plan ${plan} was cancelled` };
    default:
      return {
        kind: 'wait',
        reason: `plan ${plan} is ${seen.state} (${seen.done}/${seen.total} tasks done)`,
      };
  }
}

/** The decision for what was seen. */
export function decideDependency(seen: DependencySeen): DependencyOutcome {
  if (seen.kind === 'plan') return fromPlan(seen.plan, seen.seen);
  const { schedule } = seen;
  // Not there yet: it may be put (or the schedule's tick backfilled) later.
  if (seen.scheduleMissing === true)
    return { kind: 'wait', reason: `schedule "${schedule}" does not exist (yet)` };
  if (seen.tick === undefined)
    return {
      kind: 'fail',
      reason: `schedule "${schedule}" has no tick at or before ${new Date(seen.at).toISOString()}`,
    };
  const tick = new Date(seen.tick).toISOString();
  const run = `schedule "${schedule}"'s run of ${tick}`;
  if (seen.record?.state === 'skipped')
    return { kind: 'fail', reason: `${run} was skipped (${seen.record.reason ?? 'no reason'})` };
  if (seen.record?.state === 'failed')
    return {
      kind: 'fail',
      reason: `${run} could not be built (${seen.record.reason ?? 'no reason'})`,
    };
  if (seen.plan !== undefined && seen.seen?.exists === true)
    return fromPlan(seen.plan, seen.seen, tick);
  if (seen.record?.state === 'fired')
    return {
      kind: 'fail',
      reason: `${run} fired, but its plan ${seen.plan ?? '?'} is gone (deleted): whether it completed is not known`,
    };
  return {
    kind: 'wait',
    reason: `${run} has not been made yet (a scheduler fires it at its time; a past one needs a backfill)`,
  };
}
