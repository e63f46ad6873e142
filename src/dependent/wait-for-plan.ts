/**
 * One check of a dependent task (the built-in `zk-plan:wait-for-plan`): look at the awaited plan,
 * then complete, say "not yet" (checked again after `checkEveryMs`, no worker held), or fail for good.
 */
import { ZkPlanError } from '../errors/base-error.js';
import { DependencyFailedError } from '../errors/dependency-errors.js';
import { TaskExecutionError } from '../errors/task-errors.js';
import { InvalidArgumentError } from '../errors/usage-errors.js';
import type { TaskContext } from '../exec/task-context.js';
import { decideDependency, type DependencyOutcome } from './dependency-decision.js';
import type { DependencyLookup } from './dependency-lookup.js';
import { checkTarget, type CheckedTarget } from './dependency-target.js';

export async function waitForPlanCheck(
  ctx: Pick<TaskContext, 'task' | 'notYet'>,
  params: readonly unknown[],
  lookup: DependencyLookup,
): Promise<unknown> {
  let target: CheckedTarget;
  try {
    target = checkTarget(params[0], `task ${ctx.task}`);
  } catch (error) {
    // Checked when the task was added; a task another tool wrote may hold anything. No try can pass.
    if (!(error instanceof InvalidArgumentError)) throw error;
    throw new DependencyFailedError(ctx.task, `its dependency is invalid: ${error.message}`);
  }
  let outcome: DependencyOutcome;
  try {
    outcome = decideDependency(await lookup.see(target));
  } catch (error) {
    // ZooKeeper's faults and zk-plan's own errors pass as they are (a lost connection is no fault of
    // the task); anything else (a cron its library refuses at that moment) is the try's failure,
    // charged, so that the task does not come back for ever.
    if (error instanceof ZkPlanError) throw error;
    throw new TaskExecutionError(
      ctx.task,
      error instanceof Error ? error.message : String(error),
      error,
    );
  }
  if (outcome.kind === 'done') return outcome.value;
  if (outcome.kind === 'wait') return ctx.notYet(outcome.reason, { afterMs: target.checkEveryMs });
  throw new DependencyFailedError(ctx.task, outcome.reason);
}
