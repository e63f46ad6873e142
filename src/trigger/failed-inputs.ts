/**
 * Which inputs of a task came as failures, and through which task's link. The walk that hands a
 * failure on removes the link it went through (failure-hand-on.ts), so the producer's side no longer
 * shows the edge; the task that took the failure keeps it instead: in its `arg-N` while it lives, in
 * its history record once it is done. Views (`plans.describe`, `show`, the web view) draw the edge
 * from there. Pure.
 */
import { ARG_PREFIX, DEP_PREFIX, childPath, serialOf } from '../zk/layout.js';
import { outcomeOf } from './task-outcome.js';

/** An input that came as a failure: the input's slot (the `dep-N` path it replaced) and the task whose link carried it. */
export interface FailedInput {
  readonly dep: string;
  readonly producer: string;
}

/**
 * The failed inputs among a task's inputs: `argNames` its `arg-N` children in serial order, `values`
 * their decoded values in the same order.
 */
export function failedInputsOf(
  task: string,
  argNames: readonly string[],
  values: readonly unknown[],
): FailedInput[] {
  return argNames.flatMap((name, index) => {
    const outcome = outcomeOf(values[index]);
    const serial = serialOf(name, ARG_PREFIX);
    if (outcome.status !== 'failed' || serial === undefined) return [];
    return [
      {
        dep: childPath(task, `${DEP_PREFIX}${serial}`),
        producer: outcome.error.blocked ?? outcome.error.task,
      },
    ];
  });
}
