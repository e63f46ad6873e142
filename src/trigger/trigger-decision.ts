/**
 * Whether a claimed task runs, given its trigger rule and how its inputs ended (a pure decision,
 * made by the worker that claimed it, once every input is there). A task with no inputs runs
 * whatever its rule: it has nothing to wait for.
 */
import { outcomeOf, type InputFailure, type InputOutcome } from './task-outcome.js';
import type { TriggerRule } from './trigger-rule.js';

export type TriggerDecision =
  /** Run the function on `args`: the values themselves (allSucceeded), or each input's outcome. */
  | { readonly kind: 'run'; readonly args: readonly unknown[] }
  /**
   * Complete as skipped without running. `reason` and `origin` go on to the task's dependents (the
   * task that first skipped, and why); `why` is this task's own record of it.
   */
  | {
      readonly kind: 'skip';
      readonly reason: string;
      readonly origin: string;
      readonly why: string;
    }
  /** An input failed and the rule does not take failures: the task can never run. */
  | { readonly kind: 'blocked'; readonly failure: InputFailure };

export function decideTrigger(
  rule: TriggerRule,
  task: string,
  values: readonly unknown[],
): TriggerDecision {
  const outcomes = values.map(outcomeOf);
  if (rule === 'allSucceeded') return allSucceeded(outcomes);
  if (outcomes.length === 0 || rule === 'allDone') return { kind: 'run', args: outcomes };
  const wanted = rule === 'anySucceeded' ? 'succeeded' : 'failed';
  if (outcomes.some((outcome) => outcome.status === wanted)) return { kind: 'run', args: outcomes };
  const reason = rule === 'anySucceeded' ? 'no input succeeded' : 'no input failed';
  return { kind: 'skip', reason, origin: task, why: `${reason} (trigger rule ${rule})` };
}

function allSucceeded(outcomes: readonly InputOutcome[]): TriggerDecision {
  for (const outcome of outcomes) {
    if (outcome.status === 'failed') return { kind: 'blocked', failure: outcome.error };
    if (outcome.status === 'skipped')
      return {
        kind: 'skip',
        reason: outcome.reason,
        origin: outcome.task,
        why: `its input ${outcome.task} was skipped: ${outcome.reason}`,
      };
  }
  return {
    kind: 'run',
    args: outcomes.map((outcome) => (outcome.status === 'succeeded' ? outcome.value : undefined)),
  };
}
