import { ATTEMPTS, CONTROL, WAITING } from '../zk/layout.js';
import { isClaimable, classifyTask, type TaskState } from '../store/task-state.js';
import type { Claim, TaskStore } from '../store/task-store.js';
import type { ClaimBook } from './claim-book.js';

/** Who is looking for a task: `stop` ends the search, `taskSignal` becomes the claimed task's signal. */
export interface Seeker {
  readonly workerId: string;
  readonly stop: AbortSignal;
  readonly taskSignal: AbortSignal;
  /** Tasks this worker leaves alone for now (they failed in its hands recently). */
  readonly skip?: (task: string) => boolean;
}

/** What a scan needs besides the seeker: the process's bookkeeping and what it knows of plans. */
export interface ScanContext {
  /** Reservations of this process's loops: a task is reserved before its claim and given up when the claim fails. */
  readonly book?: ClaimBook;
  /** Plans to pass over (failFast plans that failed; indexed plans between full scans; settled plans). */
  readonly skipPlan?: (plan: string) => boolean;
  /** Told of tasks found owned by another worker, to watch for their owner going away. */
  readonly onOwned?: (task: string) => void;
  /** Told of a task passed over because its retry delay is not over, and when it is. */
  readonly onWaitingForRetry?: (task: string, at: number) => void;
  /** Told of a plan a whole pass found nothing in that can move by itself: no task, or only failed and waiting ones. */
  readonly onSettled?: (plan: string) => void;
}

/** States in which nothing happens in a task until something else does (an input arrives, a retryFailed). */
const STILL: ReadonlySet<TaskState> = new Set<TaskState>(['failed', 'waiting']);

/**
 * The spec's `get-task`: walks the plan's task-* children oldest first, looking each one's
 * children up only when it gets to it, deletes abandoned task nodes, and takes the first
 * runnable (or finishable) task it wins the owner race for. A pass that claims nothing also
 * repairs the plan's `failed` marker: written when a failed task has none (its writer crashed in
 * between), removed when no task failed (left by a retryFailed that crashed). It is removed only
 * after a pass that read every task: a task the seeker passes over (one that failed in its hands a
 * moment ago, or one its process already finished) may be the failed one.
 */
export async function getTask(
  store: TaskStore,
  plan: string,
  seeker: Seeker,
  context: ScanContext = {},
): Promise<Claim | undefined> {
  const listing = await store.reads.listPlan(plan);
  if (listing === undefined) return undefined;
  if (listing.children.includes(CONTROL)) {
    context.onSettled?.(plan); // paused or cancelled: nothing starts until a resume (which touches the plan)
    return undefined;
  }
  // Read before the tasks: a failure written while we look rewrites the marker, so we never remove a fresh one.
  const marker = listing.failed ? await store.reads.planFailedMarker(plan) : undefined;
  if (
    marker !== undefined &&
    (await store.reads.readPlanSettings(plan)).failurePolicy === 'failFast'
  ) {
    if (await hasFailedTask(store, listing.tasks)) {
      context.onSettled?.(plan);
      return undefined;
    }
    // A marker without a failed task (a retryFailed that raced a failure, or crashed part-way) stops the
    // plan in every process: remove it now (unless a failure rewrote it meanwhile), before claiming anything.
    await store.clearPlanFailed(plan, marker);
  }
  let allStill = true;
  // A task passed over unread may be the failed one: a pass that skipped any never removes the marker.
  let readEveryTask = true;
  let failedTask: string | undefined;
  for (const task of listing.tasks) {
    if (seeker.stop.aborted) return undefined;
    if (seeker.skip?.(task)) {
      allStill = false;
      readEveryTask = false;
      continue;
    }
    const taskListing = await store.reads.inspectTask(task);
    if (taskListing === undefined) continue; // removed since the plan was listed
    const state = classifyTask(taskListing.children, taskListing.childVersion);
    if (state === 'failed') failedTask ??= task;
    if (!STILL.has(state)) allStill = false;
    if (state === 'abandoned') {
      await store.deleteAbandonedTask(task);
      continue;
    }
    if (state === 'building' && listing.ready) {
      await store.settleOrphan(task, listing.children);
      continue;
    }
    if (state === 'owned') context.onOwned?.(task);
    if (!isClaimable(state)) continue;
    if (state === 'runnable' && taskListing.children.includes(ATTEMPTS)) {
      const retryAt = await retryTime(store, task);
      if (retryAt > Date.now()) {
        context.onWaitingForRetry?.(task, retryAt);
        continue;
      }
    }
    // Its function said "not yet" (ctx.notYet): not claimed before its time to check again, but
    // offered then (a scan that claimed it would stop at it every time, before the tasks after it).
    if (state === 'runnable' && taskListing.children.includes(WAITING)) {
      const checkAt = await checkAgainTime(store, task);
      if (checkAt > Date.now()) {
        context.onWaitingForRetry?.(task, checkAt);
        continue;
      }
    }
    if (context.book && !context.book.reserve(task)) continue;
    let claim: Claim | undefined;
    try {
      claim = await store.claim(task, seeker.workerId, seeker.taskSignal);
    } finally {
      if (claim === undefined) context.book?.release(task);
    }
    if (claim !== undefined) return claim;
  }
  if (seeker.stop.aborted) return undefined;
  if (failedTask !== undefined && marker === undefined)
    await store.markPlanFailed(plan, failedTask, new Date());
  else if (failedTask === undefined && marker !== undefined && readEveryTask)
    await store.clearPlanFailed(plan, marker);
  else if (allStill) context.onSettled?.(plan);
  return undefined;
}

/** The spec's `get-task-from-any-plan`: the first task found in a ready plan under `parent`, plans looked at lazily. */
export async function getTaskFromAnyPlan(
  store: TaskStore,
  parent: string,
  seeker: Seeker,
  context: ScanContext = {},
): Promise<Claim | undefined> {
  const plans = await store.reads.listPlans(parent);
  if (plans === undefined) return undefined;
  for (const plan of plans) {
    if (seeker.stop.aborted) return undefined;
    if (context.skipPlan?.(plan)) continue;
    if (!(await store.reads.isReady(plan))) continue;
    const claim = await getTask(store, plan, seeker, context);
    if (claim !== undefined) return claim;
  }
  return undefined;
}

/** True when one of the tasks failed for good (looked at in order, until one is found). */
async function hasFailedTask(store: TaskStore, tasks: readonly string[]): Promise<boolean> {
  for (const task of tasks) {
    const listing = await store.reads.inspectTask(task);
    if (listing !== undefined && classifyTask(listing.children, listing.childVersion) === 'failed')
      return true;
  }
  return false;
}

/** When a task whose function said "not yet" is checked again (0: now; an unreadable record does not stop it). */
async function checkAgainTime(store: TaskStore, task: string): Promise<number> {
  try {
    return (await store.reads.readWaiting(task))?.notBefore.getTime() ?? 0;
  } catch {
    return 0;
  }
}

/** When a task that failed before may be tried again (0: now). */
async function retryTime(store: TaskStore, task: string): Promise<number> {
  try {
    return (await store.reads.readAttempts(task))?.notBefore.getTime() ?? 0;
  } catch {
    return 0; // an unreadable record does not stop the task: perform-task reports it
  }
}
