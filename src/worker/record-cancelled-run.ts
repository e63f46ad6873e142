/**
 * The history record of a run its plan's cancel stopped, written by the worker that ran it before
 * it gives the task back. control.cancel records every task where it stands, but it reads the plan
 * after its control record: by then the worker that saw the cancel may have given its task back,
 * and the task would read as ready to run. Written first, under the claim's session, this record
 * wins (a task's first record is never rewritten), in whichever order the two come, also when the
 * cancel is cut short and called again.
 */
import { parseControlRecord } from '../control/control-record.js';
import { recordedDefinition, type TaskHistoryRecord } from '../store/task-history.js';
import type { Claim, TaskStore } from '../store/task-store.js';
import { ATTEMPTS, CONTROL, childPath } from '../zk/layout.js';
import type { Zk } from '../zk/zk.js';

/** Keeps the record "cancelled while running, on this worker" of the claimed task, in a plan that keeps a history. */
export async function recordCancelledRun(zk: Zk, store: TaskStore, claim: Claim): Promise<void> {
  if (!(await store.reads.readPlanSettings(claim.plan)).history) return;
  const [listing, definition, owner, control] = await Promise.all([
    store.reads.inspectTask(claim.task),
    store.reads.readDefinition(claim.task),
    store.reads.readOwner(claim.task),
    zk.tryGetData(childPath(claim.plan, CONTROL)),
  ]);
  // Nothing to record for a task already gone, or held by another session (this claim lapsed).
  if (listing === undefined || definition === undefined) return;
  if (owner?.sessionId !== claim.session.id) return;
  const [links, attempts] = await Promise.all([
    store.reads.readLinks(claim.task, listing.children),
    listing.children.includes(ATTEMPTS)
      ? store.reads.readAttempts(claim.task).catch(() => undefined)
      : undefined,
  ]);
  const cancel =
    control === undefined
      ? undefined
      : parseControlRecord(childPath(claim.plan, CONTROL), control.data);
  const claimedAt = owner.claimedAt instanceof Date ? owner.claimedAt : undefined;
  const record: TaskHistoryRecord = {
    state: 'cancelled',
    was: 'running',
    ...recordedDefinition(definition),
    outputs: [...links.values()],
    failedTries: attempts?.failures ?? 0,
    ...(attempts?.tries !== undefined && attempts.tries.length > 0
      ? { tries: attempts.tries }
      : {}),
    cancelledAt: cancel?.state === 'cancelled' ? cancel.at : new Date(),
    workerId: claim.workerId,
    ...(claimedAt !== undefined && !Number.isNaN(claimedAt.getTime())
      ? { startedAt: claimedAt }
      : {}),
  };
  await store.keepHistory(claim.task, record, { fence: claim.session });
}
