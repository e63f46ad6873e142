/**
 * One check of a dependent task (the built-in `zk-plan:wait-for-plan`): look at the awaited plan,
 * then complete, say "not yet" (checked again after `checkEveryMs`, no worker held), or fail for good.
 */
import { DependencyFailedError } from '../errors/dependency-errors.js';
import type { TaskContext } from '../exec/task-context.js';
import { decideDependency } from './dependency-decision.js';
import type { DependencyLookup } from './dependency-lookup.js';
import { checkTarget } from './dependency-target.js';

export async function waitForPlanCheck(
  ctx: Pick<TaskContext, 'task' | 'notYet'>,
  params: readonly unknown[],
  lookup: DependencyLookup,
): Promise<unknown> {
  const target = checkTarget(params[0], `task ${ctx.task}`);
  const outcome = decideDependency(await lookup.see(target));
  if (outcome.kind === 'done') return outcome.value;
  if (outcome.kind === 'wait') return ctx.notYet(outcome.reason, { afterMs: target.checkEveryMs });
  throw new DependencyFailedError(ctx.task, outcome.reason);
}
