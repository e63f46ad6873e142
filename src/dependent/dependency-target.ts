/**
 * A dependent task (DolphinScheduler's DEPENDENT): a task of the built-in function
 * `zk-plan:wait-for-plan`, which completes once another plan has completed, and fails for good if
 * that plan fails or is cancelled. It waits with `ctx.notYet`, so no worker is held meanwhile.
 * The other plan is named by its path, or as a schedule's run for a tick.
 */
import { MAX_TIME_MS } from '../backfill/backfill-record.js';
import { DEFAULTS } from '../config/defaults.js';
import { InvalidArgumentError } from '../errors/usage-errors.js';
import { MAX_NOT_YET_MS, MIN_NOT_YET_MS } from '../exec/not-yet.js';
import { call, type CallSpec } from '../exec/task-spec.js';
import { assertValidPath } from '../zk/layout.js';

/**
 * The name of the built-in function of dependent tasks: every worker runs it; no FunctionRegistry takes it.
 *
 * @category Plans and tasks
 */
export const WAIT_FOR_PLAN_FUNCTION = 'zk-plan:wait-for-plan';

/**
 * What a dependent task waits for: a plan by its path, or the run of a schedule for the tick at
 * or before `at` + `offsetMs` (`{ schedule: 'nightly-load', at: { $param: 'firedAt' }, offsetMs:
 * -86_400_000 }` in a schedule's spec: yesterday's run).
 *
 * @category Plans and tasks
 */
export type DependencyTarget = (
  | { readonly plan: string }
  | {
      readonly schedule: string;
      /** The schedules' parent. @defaultValue DEFAULTS.cliParents.schedules ('/schedules') */
      readonly schedules?: string;
      /** A moment (ISO-8601 or ms since the epoch): the run of the schedule's newest tick at or before it (+ `offsetMs`). */
      readonly at: string | number;
      /** Added to `at`, in ms (negative: earlier). @defaultValue 0 */
      readonly offsetMs?: number;
    }
) & {
  /** How often it looks again while the plan has not finished, in ms. @defaultValue DEFAULTS.notYetAfterMs (5 000) */
  readonly checkEveryMs?: number;
};

/** A target, checked. */
export type CheckedTarget = (
  | { readonly kind: 'plan'; readonly plan: string }
  | {
      readonly kind: 'tick';
      readonly schedule: string;
      readonly schedules: string;
      /** The moment whose tick's run counts (`at` + `offsetMs`), ms since the epoch. */
      readonly at: number;
    }
) & { readonly checkEveryMs: number };

const KEYS = new Set(['plan', 'schedule', 'schedules', 'at', 'offsetMs', 'checkEveryMs']);

/**
 * A task that waits for another plan: `addTask(plan, waitForPlan({ plan: '/plans/export' }))`.
 * Its result, handed to its dependents, is `{ plan, state: 'completed' }`.
 *
 * @category Plans and tasks
 */
export function waitForPlan(target: DependencyTarget): CallSpec {
  checkTarget(target, 'waitForPlan');
  return call(WAIT_FOR_PLAN_FUNCTION, target);
}

/** The target of a dependent task's params, checked: InvalidArgumentError naming `where` otherwise. */
export function checkTarget(value: unknown, where: string): CheckedTarget {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new InvalidArgumentError(
      'target',
      `${where}: expected { plan } or { schedule, at, schedules?, offsetMs? }`,
    );
  const target = value as Record<string, unknown>;
  for (const key of Object.keys(target))
    if (!KEYS.has(key))
      throw new InvalidArgumentError(
        key,
        `${where}: unknown field of a dependency; the known ones are ${[...KEYS].join(', ')}`,
      );
  const checkEveryMs = target['checkEveryMs'] ?? DEFAULTS.notYetAfterMs;
  if (
    typeof checkEveryMs !== 'number' ||
    !Number.isInteger(checkEveryMs) ||
    checkEveryMs < MIN_NOT_YET_MS ||
    checkEveryMs > MAX_NOT_YET_MS
  )
    throw new InvalidArgumentError(
      'checkEveryMs',
      `${where}: expected a whole number of ms from ${MIN_NOT_YET_MS} to ${MAX_NOT_YET_MS}, got ${String(checkEveryMs)}`,
    );
  if ('plan' in target) {
    if ('schedule' in target || 'at' in target)
      throw new InvalidArgumentError('plan', `${where}: give either plan or schedule, not both`);
    assertValidPath('plan', target['plan']);
    return { kind: 'plan', plan: target['plan'], checkEveryMs };
  }
  const { schedule, at } = target;
  if (typeof schedule !== 'string' || schedule === '')
    throw new InvalidArgumentError(
      'schedule',
      `${where}: expected { plan: '/path/of/a/plan' } or { schedule: 'name', at }`,
    );
  const schedules = target['schedules'] ?? DEFAULTS.cliParents.schedules;
  assertValidPath('schedules', schedules);
  const moment = typeof at === 'string' ? Date.parse(at) : at;
  if (
    typeof moment !== 'number' ||
    !Number.isSafeInteger(moment) ||
    moment < 0 ||
    moment > MAX_TIME_MS
  )
    throw new InvalidArgumentError(
      'at',
      `${where}: expected a moment, ISO-8601 or ms since the epoch (in a schedule's spec: { $param: 'firedAt' }), got ${JSON.stringify(at) ?? String(at)}`,
    );
  const offsetMs = target['offsetMs'] ?? 0;
  if (
    typeof offsetMs !== 'number' ||
    !Number.isSafeInteger(offsetMs) ||
    moment + offsetMs < 0 ||
    moment + offsetMs > MAX_TIME_MS
  )
    throw new InvalidArgumentError(
      'offsetMs',
      `${where}: expected a whole number of ms that keeps the moment a date`,
    );
  return { kind: 'tick', schedule, schedules, at: moment + offsetMs, checkEveryMs };
}
