/**
 * The pure decisions of the scheduler: which ticks of a schedule are due and which of them fire
 * (misfire policy), and whether a due tick fires given the run before it (overlap policy).
 */
import type { CronTimes } from './cron-times.js';

/** At most this many on-time ticks fire in one pass (a cron firing every second with a grace of over 16 minutes has more; the older ones count as skipped). */
export const MAX_ON_TIME_TICKS = 1_000;

/**
 * What a scheduler does with ticks missed while no scheduler ran: fire each of them (up to `catchUpLimit`), fire once for them all, or skip them.
 *
 * @category Schedules
 */
export type MisfirePolicy = 'fireAll' | 'fireOnce' | 'skip';
/**
 * What a tick does while the schedule's previous run is unfinished: skip the tick, run both, or cancel the previous run first.
 *
 * @category Schedules
 */
export type OverlapPolicy = 'skip' | 'allow' | 'cancelPrevious';

export interface DueInput {
  /** The last tick handled (fired or passed over); undefined before the first. */
  readonly cursor: number | undefined;
  /** Ticks up to this (a new schedule's put, a changed cron, a resume) never fire. */
  readonly activeSince: number;
  readonly now: number;
  readonly misfire: MisfirePolicy;
  readonly catchUpLimit: number;
  /** A tick at most this late is on time; later ones were missed (no scheduler ran at the time). */
  readonly misfireGraceMs: number;
}

export interface DueDecision {
  /** Ticks to fire, oldest first. */
  readonly fire: readonly number[];
  /** Missed ticks passed over by the misfire policy (a lower bound when `skippedMore`). */
  readonly skipped: number;
  readonly skippedMore: boolean;
  /** The new cursor: the newest tick considered; undefined when none was due. */
  readonly cursor: number | undefined;
}

/**
 * Due ticks are those in (max(cursor, activeSince), now]. On-time ones always fire. Missed
 * ones: `fireAll` fires the newest `catchUpLimit` of them (older ones are passed over); `fireOnce`
 * fires the newest one unless an on-time tick fires anyway; `skip` fires none.
 */
export function dueTicks(times: Pick<CronTimes, 'latestIn'>, input: DueInput): DueDecision {
  const after = Math.max(input.cursor ?? Number.NEGATIVE_INFINITY, input.activeSince);
  // On time: now − tick ≤ grace, i.e. tick > now − grace − 1 (whole ms).
  const onTimeAfter = Math.max(after, input.now - input.misfireGraceMs - 1);
  const onTime = times.latestIn(onTimeAfter, input.now, MAX_ON_TIME_TICKS);
  const missed = times.latestIn(after, onTimeAfter, input.catchUpLimit);
  let firedMissed: readonly number[];
  if (input.misfire === 'fireAll') firedMissed = missed.ticks;
  else if (input.misfire === 'fireOnce')
    firedMissed = onTime.ticks.length === 0 ? missed.ticks.slice(-1) : [];
  else firedMissed = [];
  return {
    fire: [...firedMissed, ...onTime.ticks],
    skipped: missed.ticks.length - firedMissed.length,
    skippedMore: missed.more || onTime.more,
    cursor: onTime.ticks.at(-1) ?? missed.ticks.at(-1),
  };
}

/** A run of the schedule before a tick, and whether it has finished. */
export interface PreviousRun {
  readonly plan: string;
  readonly finished: boolean;
  /** A manual run still being fired (its record pending): it will run whatever the policy, but there is nothing to cancel yet. */
  readonly starting?: boolean;
}

export type OverlapDecision =
  | { readonly action: 'fire' }
  | { readonly action: 'skip'; readonly reason: string }
  | { readonly action: 'cancelThenFire'; readonly plans: readonly string[] };

/**
 * Whether a cron tick fires given the schedule's earlier runs that it may overlap (the newest
 * cron run and every manual one; manual triggers themselves always fire).
 */
export function overlapDecision(
  policy: OverlapPolicy,
  previous: readonly PreviousRun[],
): OverlapDecision {
  const unfinished = previous.filter((run) => !run.finished);
  if (unfinished.length === 0 || policy === 'allow') return { action: 'fire' };
  if (policy === 'cancelPrevious') {
    const plans = unfinished.filter((run) => run.starting !== true).map((run) => run.plan);
    return plans.length === 0 ? { action: 'fire' } : { action: 'cancelThenFire', plans };
  }
  return {
    action: 'skip',
    reason: `overlap: the previous run ${unfinished.map((run) => run.plan).join(', ')} has not finished`,
  };
}
