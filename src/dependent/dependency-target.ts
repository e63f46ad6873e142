/**
 * A dependent task (DolphinScheduler's DEPENDENT): a task of the built-in function
 * `zk-plan:wait-for-plan`, which completes once another plan has completed, and fails for good if
 * that plan fails or is cancelled. It waits with `ctx.notYet`, so no worker is held meanwhile.
 * The other plan is named by its path, or as a schedule's run for a tick.
 */
import { DEFAULTS } from '../config/defaults.js';
import { InvalidArgumentError } from '../errors/usage-errors.js';
import { checkWaitMs } from '../exec/not-yet.js';
import { call, type CallSpec } from '../exec/task-spec.js';
import { WAIT_FOR_PLAN_FUNCTION } from './wait-for-plan-function.js';
import { assertScheduleName } from '../schedule/schedule-name.js';
import { assertValidPath } from '../zk/layout.js';

export { WAIT_FOR_PLAN_FUNCTION };

/**
 * What a dependent task waits for: a plan by its path, or the run of a schedule for the tick at
 * or before `at` + `offsetMs`. In a schedule's spec, yesterday's run is
 * `{ schedule: 'nightly-load', at: { $param: 'firedAt' }, offsetMs: -86_400_000 }`.
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

/** An ISO-8601 time that says its offset (Z or ±hh:mm). */
const ISO_WITH_OFFSET = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2})$/;

/** The latest moment a dependency may name: the end of the year 9999, for which a cron's ticks are computed. */
const MAX_DEPENDENCY_TIME_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

/** A value as an error message shows it, whatever it is (a bigint, a cycle). */
function describeValue(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.slice(0, 100));
  if (
    typeof value === 'number' ||
    typeof value === 'boolean' ||
    value === null ||
    value === undefined
  )
    return String(value);
  return `a ${typeof value}`;
}

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
  const checkEveryMs = checkWaitMs(
    'checkEveryMs',
    target['checkEveryMs'] ?? DEFAULTS.notYetAfterMs,
    where,
  );
  if ('plan' in target) {
    const extra = ['schedule', 'schedules', 'at', 'offsetMs'].filter((key) => key in target);
    if (extra.length > 0)
      throw new InvalidArgumentError(
        'plan',
        `${where}: a dependency on a plan takes no ${extra.join(', ')} (those name a schedule's run)`,
      );
    assertValidPath('plan', target['plan']);
    return { kind: 'plan', plan: target['plan'], checkEveryMs };
  }
  const { schedule, at } = target;
  if (schedule === undefined)
    throw new InvalidArgumentError(
      'schedule',
      `${where}: expected { plan: '/path/of/a/plan' } or { schedule: 'name', at }`,
    );
  assertScheduleName(schedule);
  const schedules = target['schedules'] ?? DEFAULTS.cliParents.schedules;
  assertValidPath('schedules', schedules);
  // A time with its offset: every worker reads it as the same moment, whatever its own time zone.
  const moment = typeof at === 'string' && ISO_WITH_OFFSET.test(at) ? Date.parse(at) : at;
  if (
    typeof moment !== 'number' ||
    !Number.isSafeInteger(moment) ||
    moment < 0 ||
    moment > MAX_DEPENDENCY_TIME_MS
  )
    throw new InvalidArgumentError(
      'at',
      `${where}: expected a moment, ISO-8601 with its offset (2026-11-26T02:30:00Z) or ms since the epoch (in a schedule's spec: { $param: 'firedAt' }), got ${describeValue(at)}`,
    );
  const offsetMs = target['offsetMs'] ?? 0;
  if (
    typeof offsetMs !== 'number' ||
    !Number.isSafeInteger(offsetMs) ||
    moment + offsetMs < 0 ||
    moment + offsetMs > MAX_DEPENDENCY_TIME_MS
  )
    throw new InvalidArgumentError(
      'offsetMs',
      `${where}: expected a whole number of ms that keeps the moment a date`,
    );
  return { kind: 'tick', schedule, schedules, at: moment + offsetMs, checkEveryMs };
}
