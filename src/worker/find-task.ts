import { ATTEMPTS } from '../zk/layout.js';
import { isClaimable, classifyTask } from '../store/task-state.js';
import type { Claim, TaskStore } from '../store/task-store.js';

/** Who is looking for a task: `stop` ends the search, `taskSignal` becomes the claimed task's signal. */
export interface Seeker {
  readonly workerId: string;
  readonly stop: AbortSignal;
  readonly taskSignal: AbortSignal;
  /** Tasks this worker leaves alone for now (they failed in its hands recently). */
  readonly skip?: (task: string) => boolean;
  /** Plans to pass over (failFast plans that failed; indexed plans between full scans). */
  readonly skipPlan?: (plan: string) => boolean;
  /** Told of tasks found owned by another worker, to watch for their owner going away. */
  readonly onOwned?: (task: string) => void;
  /** Reserves a task before claiming it (false: a sibling loop has it); released again when the claim fails. */
  readonly reserve?: (task: string) => boolean;
  readonly unreserve?: (task: string) => void;
  /** Told of a task passed over because its retry delay is not over, and when it is. */
  readonly onWaitingForRetry?: (task: string, at: number) => void;
}

/**
 * The spec's `get-task`: walks the plan's task-* children oldest first, looking each one's
 * children up only when it gets to it, deletes abandoned task nodes, and takes the first
 * runnable (or finishable) task it wins the owner race for.
 */
export async function getTask(store: TaskStore, plan: string, seeker: Seeker): Promise<Claim | undefined> {
  const listing = await store.listPlan(plan);
  if (listing === undefined) return undefined;
  if (listing.failed && (await store.readPlanSettings(plan)).failurePolicy === 'failFast') return undefined;
  for (const task of listing.tasks) {
    if (seeker.stop.aborted) return undefined;
    if (seeker.skip?.(task)) continue;
    const taskListing = await store.inspectTask(task);
    if (taskListing === undefined) continue; // removed since the plan was listed
    const state = classifyTask(taskListing.children, taskListing.childVersion);
    if (state === 'abandoned') {
      await store.deleteAbandonedTask(task);
      continue;
    }
    if (state === 'owned') seeker.onOwned?.(task);
    if (!isClaimable(state)) continue;
    if (state === 'runnable' && taskListing.children.includes(ATTEMPTS)) {
      const retryAt = await retryTime(store, task);
      if (retryAt > Date.now()) {
        seeker.onWaitingForRetry?.(task, retryAt);
        continue;
      }
    }
    if (seeker.reserve && !seeker.reserve(task)) continue;
    const claim = await store.claim(task, seeker.workerId, seeker.taskSignal);
    if (claim !== undefined) return claim;
    seeker.unreserve?.(task);
  }
  return undefined;
}

/** The spec's `get-task-from-any-plan`: the first task found in a ready plan under `parent`, plans looked at lazily. */
export async function getTaskFromAnyPlan(store: TaskStore, parent: string, seeker: Seeker): Promise<Claim | undefined> {
  const plans = await store.listPlans(parent);
  if (plans === undefined) return undefined;
  for (const plan of plans) {
    if (seeker.stop.aborted) return undefined;
    if (seeker.skipPlan?.(plan)) continue;
    if (!(await store.isReady(plan))) continue;
    const claim = await getTask(store, plan, seeker);
    if (claim !== undefined) return claim;
  }
  return undefined;
}

/** When a task that failed before may be tried again (0: now). */
async function retryTime(store: TaskStore, task: string): Promise<number> {
  try {
    return (await store.readAttempts(task))?.notBefore.getTime() ?? 0;
  } catch {
    return 0; // an unreadable record does not stop the task: perform-task reports it
  }
}
