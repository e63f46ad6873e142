/**
 * A plan whose builder died before it readied it (a schedule's tick, a sub-plan task's child) is
 * built again in place: what the dead builder left is cleared first.
 */
import {
  BATCH_PREFIX,
  HISTORY,
  RUNNABLE_INDEX,
  SPEC_RECORD,
  TASK_PREFIX,
  childPath,
  hasSequentialName,
} from '../zk/layout.js';
import { deleteValue } from '../zk/chunked-value.js';
import type { ZkSession } from '../zk/zk-client-types.js';
import type { Zk } from '../zk/zk.js';

/**
 * Deletes what a dead holder left in a plan it did not ready: its tasks, batch markers, index
 * entries and spec record; and makes the children createPlanAt makes, if it died before them. The
 * plan node stays, so new task names continue its sequence.
 */
export async function clearHalfBuilt(
  zk: Zk,
  plan: string,
  children: readonly string[],
  session: ZkSession,
  history: boolean,
): Promise<void> {
  const index = childPath(plan, RUNNABLE_INDEX);
  const entries = (await zk.tryGetChildren(index))?.children ?? [];
  await Promise.all([
    ...children
      .filter((name) => hasSequentialName(name, TASK_PREFIX) || name.startsWith(BATCH_PREFIX))
      .map((name) => zk.deleteRecursive(childPath(plan, name))),
    ...entries.map((name) => zk.deleteIfPresent(childPath(index, name), -1, { fence: session })),
    // The one name a new holder writes again: fenced, so a late delete from a dead holder cannot take the new one.
    children.includes(SPEC_RECORD)
      ? deleteValue(zk, childPath(plan, SPEC_RECORD), { fence: session })
      : undefined,
    zk.createIfAbsent(index, null, 'persistent', { fence: session }),
    history
      ? zk.createIfAbsent(childPath(plan, HISTORY), null, 'persistent', { fence: session })
      : undefined,
  ]);
}
