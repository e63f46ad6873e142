import type { EventEmitter } from 'node:events';
import { once } from 'node:events';
import type { ResolvedWorkerOptions } from '../config/options.js';
import { OwnershipLostError } from '../errors/task-errors.js';
import { PlanAbortedError } from '../errors/plan-errors.js';
import { judgeFailure } from '../store/failure-policy.js';
import { recordChargedFailure, type FailureOutcome } from './record-failure.js';
import type { ZkSession } from '../zk/zk-client.js';
import type { Zk } from '../zk/zk.js';
import { calcSleepTime } from './backoff.js';
import type { Dispatcher } from './dispatcher.js';
import { getTaskFromAnyPlan, type Seeker } from './find-task.js';
import { FailureCooldown } from './failure-cooldown.js';
import { performTask, type PerformContext } from './perform-task.js';
import type { Claim } from '../store/task-store.js';
import type { ZkPlanEvents } from './worker-events.js';
import type { WakeUp } from './wake-up.js';

const RELEASE_RETRIES = 120;
const RELEASE_RETRY_MS = 1_000;

export interface WorkerLoopRuntime extends PerformContext {
  readonly zk: Zk;
  readonly events: EventEmitter<ZkPlanEvents>;
  readonly wakeUp: WakeUp;
  readonly dispatcher: Dispatcher;
}

/** Hooks a pool uses to see and abort the task a loop is running. */
export interface WorkerLoopHooks {
  /** Aborted to abort the running task's signal (drain timeout). */
  readonly abortTasks?: AbortSignal;
  readonly onClaim?: (claim: Claim | undefined) => void;
}

/**
 * The spec's `worker`: take a task from any ready plan under `parent` and perform it; when
 * there is none, sleep `calcSleepTime(backoff, idleRounds)`. A failed task is given back (its
 * owner node removed) for another try, by any worker; this one leaves it alone for a growing
 * cool-down so it cannot starve the tasks behind it. The loop ends when `stop` aborts,
 * mid-sleep included, after the task it is running, when there is one, is done.
 */
export async function runWorkerLoop(
  parent: string,
  options: ResolvedWorkerOptions,
  stop: AbortSignal,
  runtime: WorkerLoopRuntime,
  hooks: WorkerLoopHooks = {},
): Promise<void> {
  const { workerId, backoff } = options;
  const { store, events, zk } = runtime;
  const cooldown = new FailureCooldown(backoff);
  const skip = (task: string): boolean => cooldown.isCoolingDown(task);
  let idleRounds = 0;
  const rest = async (): Promise<void> => {
    const sleepMs = calcSleepTime(backoff, idleRounds);
    events.emit('worker:idle', { workerId, round: idleRounds, sleepMs });
    idleRounds += 1;
    const sleptFully = await runtime.wakeUp.sleep(sleepMs, stop);
    if (!sleptFully && !stop.aborted) idleRounds = 0; // woken because work may be there
  };

  while (!stop.aborted) {
    if (!(await waitUntilConnected(zk, stop))) break;
    const taskController = new AbortController();
    const taskSignal = hooks.abortTasks ? AbortSignal.any([taskController.signal, hooks.abortTasks]) : taskController.signal;
    let claim: Claim | undefined;
    try {
      claim = await findWork(runtime, parent, { workerId, stop, taskSignal, skip });
    } catch (error) {
      events.emit('worker:error', { workerId, error: asError(error) });
    }
    if (claim === undefined) {
      await rest();
      continue;
    }
    hooks.onClaim?.(claim);
    runtime.dispatcher.hold(claim.task);
    events.emit('task:claimed', { task: claim.task, plan: claim.plan, workerId });
    const started = performance.now();
    let deleted = false;
    // The owner node went with the session: another worker may take the task, so stop this run.
    const abortOnExpiry = (expired: ZkSession): void => {
      if (expired.generation === claim?.session.generation) taskController.abort(new OwnershipLostError(claim.task, 'the session expired'));
    };
    zk.on('session:expired', abortOnExpiry);
    const taskDone = new AbortController(); // drops this task's listeners on shared signals
    try {
      await abortIfPlanFailsFast(runtime, claim, taskController, taskDone.signal);
      const outcome = await performTask(claim, runtime);
      deleted = outcome === 'completed' || outcome === 'finished-previous' || outcome === 'gone';
      if (outcome === 'not-runnable' || outcome === 'failed') {
        await releaseOrRetry(runtime, claim, workerId);
      } else if (outcome !== 'gone') {
        const durationMs = performance.now() - started;
        events.emit('task:completed', { task: claim.task, plan: claim.plan, workerId, durationMs, reusedResult: outcome === 'finished-previous' });
        // Indexed plans announce runnable dependents themselves (offer, watches); others need a look.
        if (!runtime.dispatcher.isIndexed(claim.plan)) runtime.wakeUp.wake(1);
      }
      cooldown.recordSuccess(claim.task);
      idleRounds = 0;
    } catch (error) {
      // Aborted by the worker (stop, session expiry, failFast): not the task's fault.
      const abortedByWorker = taskSignal.aborted;
      const judged = judgeFailure(error);
      const charged = judged.charged && !abortedByWorker;
      let outcome: FailureOutcome | undefined;
      if (charged) {
        outcome = await recordChargedFailure(store, claim, error, judged.permanent).catch((recordError: unknown) => {
          events.emit('worker:error', { workerId, error: asError(recordError) });
          return undefined;
        });
      }
      taskController.abort(); // the function's leftovers must stop; and no more writes under this claim
      events.emit('task:failed', {
        task: claim.task,
        plan: claim.plan,
        workerId,
        error: asError(error),
        charged,
        final: outcome?.final ?? false,
        ...(outcome ? { attempts: outcome.failure.attempts, nextTryAt: outcome.notBefore } : {}),
      });
      await releaseOrRetry(runtime, claim, workerId);
      cooldown.recordFailure(claim.task); // left alone here for a while, so it cannot hold up the tasks behind it
      if (outcome !== undefined && !outcome.final) runtime.dispatcher.offerLater(claim.task, outcome.notBefore.getTime(), true);
      else if (!charged) runtime.dispatcher.offerLater(claim.task, cooldown.until(claim.task), false);
    } finally {
      zk.off('session:expired', abortOnExpiry);
      taskDone.abort();
      runtime.dispatcher.letGo(claim.task, deleted);
      hooks.onClaim?.(undefined);
    }
  }
}

/**
 * A task from the runnable indexes this process watches, else from the spec's scan of every plan
 * (plans without an index; indexed plans too, once in a while, for entries a crash may have lost).
 */
async function findWork(runtime: WorkerLoopRuntime, parent: string, seeker: Seeker): Promise<Claim | undefined> {
  const { dispatcher, store } = runtime;
  await dispatcher.follow(parent);
  const fromIndex = await dispatcher.take(seeker);
  if (fromIndex !== undefined) return fromIndex;
  const fullScan = dispatcher.fullScanDue();
  return await getTaskFromAnyPlan(store, parent, {
    ...seeker,
    skip: (task) => seeker.skip?.(task) === true || dispatcher.isHeldOrDone(task),
    reserve: (task) => dispatcher.reserve(task),
    unreserve: (task) => dispatcher.unreserve(task),
    // Its index entry may have gone with a worker that died during the delay: come back at its time.
    onWaitingForRetry: (task, at) => dispatcher.offerLater(task, at, true),
    skipPlan: (plan) => !fullScan && dispatcher.isIndexed(plan),
    onOwned: (task) => void dispatcher.watchOwner(task).catch(() => undefined),
  });
}

/** For a plan with the failFast policy, aborts the task's signal as soon as the plan has failed. */
async function abortIfPlanFailsFast(runtime: WorkerLoopRuntime, claim: Claim, taskController: AbortController, taskDone: AbortSignal): Promise<void> {
  if ((await runtime.store.readPlanSettings(claim.plan)).failurePolicy !== 'failFast') return;
  const planFailed = await runtime.store.planFailureSignal(claim.plan);
  const abort = (): void => taskController.abort(new PlanAbortedError(claim.plan, claim.task));
  if (planFailed.aborted) abort();
  else planFailed.addEventListener('abort', abort, { once: true, signal: taskDone });
}

/**
 * Gives the task back. A release that fails (the connection did not come back in time) is tried
 * again in the background while the claim's session lives: an owner node left behind by a live
 * session would keep every worker off the task.
 */
async function releaseOrRetry(runtime: WorkerLoopRuntime, claim: Claim, workerId: string): Promise<void> {
  try {
    await runtime.store.release(claim);
  } catch (error) {
    runtime.events.emit('worker:error', { workerId, error: asError(error) });
    const retry = (attempt: number): void => {
      if (attempt > RELEASE_RETRIES || !runtime.zk.isCurrent(claim.session)) return;
      setTimeout(() => void runtime.store.release(claim).catch(() => retry(attempt + 1)), RELEASE_RETRY_MS).unref();
    };
    retry(1);
  }
}

/** Waits while the session is suspended (never claim then); false when stopped or the client closed. */
async function waitUntilConnected(zk: Zk, stop: AbortSignal): Promise<boolean> {
  while (zk.state !== 'connected') {
    if (stop.aborted || zk.state === 'closed') return false;
    try {
      await once(zk, 'state', { signal: stop });
    } catch {
      return false;
    }
  }
  return !stop.aborted;
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}
