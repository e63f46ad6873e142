/**
 * When a task runs, given how its inputs ended: Airflow's trigger rules, DolphinScheduler's
 * conditions. The rule is stored with the task's definition (`trigger`); a task without one runs
 * once every input succeeded, as every task did before rules existed.
 */
import { DEFAULTS } from '../config/defaults.js';
import type { TriggerRule } from './trigger-rule-names.js';
import { InvalidArgumentError } from '../errors/usage-errors.js';

export type { TriggerRule } from './trigger-rule-names.js';

/** Every rule, the default first. */
export const TRIGGER_RULES: readonly TriggerRule[] = [
  'allSucceeded',
  'allDone',
  'anySucceeded',
  'oneFailed',
];

/** The rule of a task that names none. */
export const DEFAULT_TRIGGER: TriggerRule = DEFAULTS.trigger;

export function isTriggerRule(value: unknown): value is TriggerRule {
  return typeof value === 'string' && (TRIGGER_RULES as readonly string[]).includes(value);
}

/** Checks a rule passed to addTask or a spec; InvalidArgumentError naming `label` otherwise. */
export function assertTriggerRule(value: unknown, label: string): asserts value is TriggerRule {
  if (!isTriggerRule(value))
    throw new InvalidArgumentError(
      label,
      `expected one of ${TRIGGER_RULES.map((rule) => `'${rule}'`).join(', ')}, got ${typeof value === 'string' ? JSON.stringify(value.slice(0, 40)) : typeof value}`,
    );
}

/** Whether a task with this rule receives tagged outcomes (and failures of its inputs): every rule but the default. */
export function takesOutcomes(rule: TriggerRule | undefined): boolean {
  return rule !== undefined && rule !== DEFAULT_TRIGGER;
}
