import {
  DEP_PREFIX,
  FAILED,
  OWNER,
  PROV_PREFIX,
  READY,
  RESULT,
  hasSequentialName,
} from '../zk/layout.js';

/**
 * Where a task stands, judged from its children alone (a pure decision; see docs/reference/znodes.md, "Task states"):
 * - `runnable`: ready, no unmet dep-*, nobody owns it: run its function.
 * - `finishable`: has a result but nobody owns it (a worker died after storing the result, or
 *   while deleting the task): propagate the result again and delete the task.
 * - `owned`: a live worker holds its ephemeral owner node.
 * - `failed`: it failed for good (attempts used up, or a permanent error); never taken again.
 * - `waiting`: ready but some dep-* is still unmet.
 * - `building`: not ready yet (addTask, or another program, is still writing it).
 * - `abandoned`: what is left of a deletion that stopped half-way: no children although it had
 *   some, or only `prov-*` nodes that an `addTask` made after the task's result was handed on and
 *   removed (that `addTask` takes the input from the kept result itself): delete it.
 */
export type TaskState =
  'runnable' | 'finishable' | 'owned' | 'failed' | 'waiting' | 'building' | 'abandoned';

/**
 * Classifies a task from its child names and its child version (`cversion`, the count of child
 * creations and deletions). A task with no children and `cversion` 0 was only just created and is
 * being built, so it must not be mistaken for the remains of a deleted one.
 */
export function classifyTask(children: readonly string[], childVersion: number): TaskState {
  if (children.length === 0) return childVersion > 0 ? 'abandoned' : 'building';
  const names = new Set(children);
  if (names.has(FAILED)) return 'failed'; // even while its last owner is still letting go of it
  if (names.has(OWNER)) return 'owned';
  if (names.has(RESULT)) return 'finishable';
  if (!names.has(READY)) return isLeftOfDeletion(children, childVersion) ? 'abandoned' : 'building';
  return children.some((name) => hasSequentialName(name, DEP_PREFIX)) ? 'waiting' : 'runnable';
}

/**
 * Only prov-* children, and more child changes than children: `ready` (and more) existed and was
 * deleted, so this is a finished task whose deletion stopped after a late prov-* arrived. A task
 * being built has had nothing deleted yet (its `ready` comes last), so it never looks like this.
 */
function isLeftOfDeletion(children: readonly string[], childVersion: number): boolean {
  return (
    childVersion > children.length && children.every((name) => hasSequentialName(name, PROV_PREFIX))
  );
}

/** States in which a worker may try to take ownership. */
export function isClaimable(state: TaskState): state is 'runnable' | 'finishable' {
  return state === 'runnable' || state === 'finishable';
}
