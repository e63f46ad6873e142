/**
 * How a command names a task on the command line: by its path (`/plans/plan-0000000003/task-0000000007`),
 * or by its plan and key (`/plans/plan-0000000003 load-eu`), the key its spec or `addTask(…, { key })`
 * gave it. Checked before connecting; the key is looked up once connected (TASK_KEY_NOT_FOUND, exit 5,
 * when the plan has no task with it).
 */
import type { ZkPlan } from '../zk-plan.js';
import { TASK_PREFIX, assertPlanPath, assertSequentialPath } from '../zk/layout.js';

/** A task as the command line named it. */
export type TaskArgument =
  { readonly task: string } | { readonly plan: string; readonly key: string };

/** The task a command's `<task>` argument, or its `<plan> <key>` arguments, name (InvalidArgumentError, exit 2, for a malformed path). */
export function taskArgument(pathOrPlan: string, key: string | undefined): TaskArgument {
  if (key === undefined) {
    assertSequentialPath('task', pathOrPlan, TASK_PREFIX);
    return { task: pathOrPlan };
  }
  assertPlanPath('plan', pathOrPlan);
  return { plan: pathOrPlan, key };
}

/** The task's path: as given, or the task of the plan known by the key (TaskKeyNotFoundError when none is). */
export async function resolveTaskArgument(zkPlan: ZkPlan, argument: TaskArgument): Promise<string> {
  return 'task' in argument
    ? argument.task
    : await zkPlan.plans.taskOfKey(argument.plan, argument.key);
}
