import type { EventEmitter } from 'node:events';
import { once } from 'node:events';
import type { ResolvedWorkerOptions } from '../config/options.js';
import { DrainTimeoutError, OwnershipLostError } from '../errors/task-errors.js';
import {
  PlanAbortedError,
  PlanCancelledError,
  PlanDeletedError,
  PlanPausedError,
} from '../errors/plan-errors.js';
import { isZkError } from '../errors/zk-error.js';
import { onAbort } from '../util/abort-signals.js';
import { judgeFailure } from '../store/failure-policy.js';
import { recordChargedFailure, type FailureOutcome } from './record-failure.js';
import { recordCancelledRun } from './record-cancelled-run.js';
import type { ZkSession } from '../zk/zk-client-types.js';
import type { Zk } from '../zk/zk.js';
import { calcSleepTime } from './backoff.js';
import type { Dispatcher } from './dispatcher.js';
import type { PlanStopReason } from './plan-tracker.js';
import { getTaskFromAnyPlan, type Seeker } from './find-task.js';
import { FailureCooldown } from './failure-cooldown.js';
import { LeftTasks } from './left-tasks.js';
import { ShellDisabledError } from '../errors/shell-errors.js';
import {
  performTask,
  type OnTryStart,
  type PerformContext,
  type PerformOutcome,
  type TryStart,
} from './perform-task.js';
import type { Claim } from '../store/task-store.js';
import { classifyTask } from '../store/task-state.js';
import type { TaskGivenBackReason, ZkPlanEvents } from './worker-events.js';
import type { WakeUp } from './wake-up.js';
import { TaskLogs } from '../logs/task-logs.js';
import { startAttemptSpan, tracingLoading, type TracedSpan } from '../tracing/tracing.js';
import { attemptAbandoned, attemptFailed, attemptSucceeded } from '../tracing/attempt-span.js';

const RELEASE_RETRIES = 120;
const RELEASE_RETRY_MS = 1_000;

export interface WorkerLoopRuntime extends PerformContext {
  readonly taskLogs: TaskLogs;
  readonly zk: Zk;
  readonly events: EventEmitter<ZkPlanEvents>;
  readonly wakeUp: WakeUp;
  readonly dispatcher: Dispatcher;
  /** Tasks this pool leaves to other workers (shell tasks, without allowShell): none of its loops takes them. */
  readonly leftToOthers: LeftTasks;
}

/** What a process shares among its worker loops, for `workerLoopRuntime`. */
export interface WorkerLoopParts {
  readonly zk: Zk;
  readonly store: PerformContext['store'];
  readonly events: EventEmitter<ZkPlanEvents>;
  readonly wakeUp: WakeUp;
  readonly dispatcher: Dispatcher;
  readonly limits: NonNullable<PerformContext['limits']>;
  readonly container: PerformContext['container'];
  readonly functions: PerformContext['execution']['functions'];
  readonly spawner: PerformContext['spawner'];
  /** The reads of dependent tasks (the built-in `zk-plan:wait-for-plan`). */
  readonly dependencies: NonNullable<PerformContext['execution']['dependencies']>;
  /** The checks of sub-plan tasks (the built-in `zk-plan:sub-plan`). */
  readonly subPlans: NonNullable<PerformContext['execution']['subPlans']>;
}

/** The runtime of one pool's loops: the process's shared parts wired together, and the pool's execution settings. */
export function workerLoopRuntime(
  parts: WorkerLoopParts,
  options: ResolvedWorkerOptions,
): WorkerLoopRuntime {
  const { dispatcher, limits } = parts;
  return {
    zk: parts.zk,
    store: parts.store,
    events: parts.events,
    wakeUp: parts.wakeUp,
    dispatcher,
    leftToOthers: new LeftTasks(),
    onRunnable: (tasks) => dispatcher.offer(tasks),
    limits,
    onLimitFull: (task, limitPath) => dispatcher.waitForSlot(task, limitPath, limits),
    onSlotFreed: (limitPath) => dispatcher.slotFreed(limitPath),
    controlView: dispatcher,
    container: parts.container,
    spawner: parts.spawner,
    execution: {
      functions: parts.functions,
      allowInline: options.allowInline,
      inlineTimeoutMs: options.inlineTimeoutMs,
      allowShell: options.allowShell,
      shellKillGraceMs: options.shellKillGraceMs,
      maxResultBytes: options.maxResultBytes,
      dependencies: parts.dependencies,
      subPlans: parts.subPlans,
    },
    taskLogs: new TaskLogs(parts.zk, options.taskLogs, (error) =>
      parts.events.emit('worker:error', {
        workerId: options.workerId,
        error: error instanceof Error ? error : new Error(String(error)),
      }),
    ),
  };
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
  const { events, zk } = runtime;
  const loading = tracingLoading(); // settled once per process: the attempts' spans are made without waiting
  if (loading !== undefined) await loading;
  const cooldown = new FailureCooldown(backoff);
  const skip = (task: string): boolean =>
    cooldown.isCoolingDown(task) || runtime.leftToOthers.isLeft(task);
  let idleRounds = 0;
  const rest = async (): Promise<void> => {
    const sleepMs = calcSleepTime(backoff, idleRounds);
    emitSafely(events, 'worker:idle', { workerId, round: idleRounds, sleepMs });
    idleRounds += 1;
    const sleptFully = await runtime.wakeUp.sleep(sleepMs, stop);
    if (!sleptFully && !stop.aborted) idleRounds = 0; // woken because work may be there
  };

  while (!stop.aborted) {
    if (!(await waitUntilConnected(zk, stop))) break;
    // One controller per round, linked to the pool's abort and detached at the end of the round
    // (AbortSignal.any would keep every round's signal alive as long as the pool's: nodejs/node#55351).
    const taskController = new AbortController();
    const detachPoolAbort = hooks.abortTasks
      ? onAbort(hooks.abortTasks, () => taskController.abort(hooks.abortTasks?.reason))
      : undefined;
    try {
      let claim: Claim | undefined;
      try {
        claim = await findWork(runtime, parent, {
          workerId,
          stop,
          taskSignal: taskController.signal,
          skip,
        });
      } catch (error) {
        emitSafely(events, 'worker:error', { workerId, error: asError(error) });
      }
      if (claim === undefined) {
        await rest();
        continue;
      }
      if (await runClaim(runtime, claim, taskController, cooldown, hooks)) idleRounds = 0;
    } finally {
      detachPoolAbort?.();
    }
  }
}

/**
 * Performs one claimed task and gives it back or lets it go, whatever happens: every listener is
 * called inside the `try`, so none can leave a claim held. Resolves true when the round did useful
 * work (the idle back-off starts again), false when the task failed or could not start.
 */
async function runClaim(
  runtime: WorkerLoopRuntime,
  claim: Claim,
  taskController: AbortController,
  cooldown: FailureCooldown,
  hooks: WorkerLoopHooks,
): Promise<boolean> {
  const { events, zk, dispatcher } = runtime;
  const { workerId } = claim;
  const started = performance.now();
  let deleted = false;
  let planGone = false;
  // What the function's start said (key, function, try): the lines after it carry the same.
  let thisTry: TryStart | undefined;
  // The try's span (with OpenTelemetry), from its function's start to its outcome; the function runs inside it.
  let span: TracedSpan | undefined;
  const onStart: OnTryStart = (start, trace) => {
    thisTry = start;
    emitSafely(events, 'task:started', { task: claim.task, plan: claim.plan, workerId, ...start });
    span = startAttemptSpan(claim, start, trace);
    return span;
  };
  // The owner node went with the session: another worker may take the task, so stop this run.
  const abortOnExpiry = (expired: ZkSession): void => {
    if (expired.generation === claim.session.generation)
      taskController.abort(new OwnershipLostError(claim.task, 'the session expired'));
  };
  zk.on('session:expired', abortOnExpiry);
  // A claim answered after its session expired (the event came before we listened) must not run either.
  if (!zk.isCurrent(claim.session))
    taskController.abort(new OwnershipLostError(claim.task, 'the session expired'));
  const detachPlanStop = dispatcher.onPlanStop(claim.plan, (reason) => {
    if (reason === 'deleted') planGone = true;
    taskController.abort(planStopError(reason, claim));
  });
  try {
    dispatcher.hold(claim.task);
    hooks.onClaim?.(claim);
    emitSafely(events, 'task:claimed', { task: claim.task, plan: claim.plan, workerId });
    const outcome = await performTask(claim, runtime, onStart, (labels, trace) => {
      thisTry = labels;
      attemptSucceeded(startAttemptSpan(claim, labels, trace), 'skipped');
    });
    deleted =
      outcome === 'completed' ||
      outcome === 'skipped' ||
      outcome === 'finished-previous' ||
      outcome === 'gone';
    if (outcome === 'continued') {
      attemptSucceeded(span, 'continued');
      span = undefined;
      await releaseOrRetry(runtime, claim, workerId);
      emitSafely(events, 'task:continued', {
        task: claim.task,
        plan: claim.plan,
        workerId,
        durationMs: performance.now() - started,
        continuation: claim.progress.continuedBy ?? '',
        ...thisTry,
      });
      // Its continuation may have finished while this loop still held it: then nobody indexed it.
      await indexIfRunnable(runtime, claim.task, workerId);
      cooldown.recordSuccess(claim.task);
      return true;
    }
    if (outcome === 'not-yet') {
      attemptSucceeded(span, 'waiting');
      span = undefined;
      await releaseOrRetry(runtime, claim, workerId);
      const nextCheckAt = claim.progress.checkAgainAt ?? new Date();
      // Only a check that ran says so; a claim that came before the time to check again does not.
      if (claim.progress.waitingFor !== undefined)
        emitSafely(events, 'task:waiting', {
          task: claim.task,
          plan: claim.plan,
          workerId,
          durationMs: performance.now() - started,
          reason: claim.progress.waitingFor,
          nextCheckAt,
          ...thisTry,
        });
      dispatcher.offerLater(claim.task, nextCheckAt.getTime(), true);
      cooldown.recordSuccess(claim.task);
      return true;
    }
    const givenBack: readonly PerformOutcome[] = [
      'not-runnable',
      'failed',
      'failed-already',
      'plan-failed',
      'plan-halted',
      'limit-full',
    ];
    if (givenBack.includes(outcome)) {
      await releaseOrRetry(runtime, claim, workerId);
      if (outcome === 'plan-halted') dispatcher.recheckPlan(claim.plan); // nothing of it is offered again until it resumes
      return outcome === 'not-runnable';
    }
    if (outcome === 'completed' || outcome === 'skipped') {
      attemptSucceeded(span, outcome);
      span = undefined;
    }
    if (outcome !== 'gone') {
      const durationMs = performance.now() - started;
      emitSafely(events, 'task:completed', {
        task: claim.task,
        plan: claim.plan,
        workerId,
        durationMs,
        reusedResult: outcome === 'finished-previous',
        ...(outcome === 'skipped' || claim.progress.skipped !== undefined
          ? { skipped: claim.progress.skipped ?? 'skipped' }
          : {}),
        ...thisTry,
      });
      // Indexed plans announce runnable dependents themselves (offer, watches); others need a look.
      if (!dispatcher.isIndexed(claim.plan)) runtime.wakeUp.wake(1);
    }
    cooldown.recordSuccess(claim.task);
    return true;
  } catch (error) {
    if (planGone || (isZkError(error, 'NO_NODE') && !(await taskExists(runtime, claim.task)))) {
      // The plan (or the task) was deleted under it: nothing to report, nothing to give back.
      taskController.abort();
      deleted = true;
      return true;
    }
    await handleFailure(runtime, claim, taskController, cooldown, error, {
      ...thisTry,
      durationMs: performance.now() - started,
      span,
    });
    span = undefined;
    return false;
  } finally {
    attemptAbandoned(span); // a try no outcome above reached (its plan or task was deleted under it)
    zk.off('session:expired', abortOnExpiry);
    detachPlanStop();
    const spawned = claim.progress.spawned ?? 0;
    if (spawned > 0)
      emitSafely(events, 'task:spawned', {
        task: claim.task,
        plan: claim.plan,
        workerId,
        count: spawned,
        ...thisTry,
      });
    dispatcher.letGo(claim.task, deleted);
    try {
      hooks.onClaim?.(undefined);
    } catch {
      // a pool's bookkeeping hook; it must not end the loop
    }
  }
}

/** A try that threw: charges it to the task when it is the task's fault, reports it, and gives the task back. */
async function handleFailure(
  runtime: WorkerLoopRuntime,
  claim: Claim,
  taskController: AbortController,
  cooldown: FailureCooldown,
  error: unknown,
  {
    span,
    ...thisTry
  }: Partial<TryStart> & {
    readonly durationMs: number;
    readonly span: TracedSpan | undefined;
  },
): Promise<void> {
  const { store, events, dispatcher } = runtime;
  const { workerId } = claim;
  // Aborted by the worker (stop, session expiry, failFast): not the task's fault.
  const abortedByWorker = claim.signal.aborted;
  const judged = judgeFailure(error);
  const charged = judged.charged && !abortedByWorker;
  let outcome: FailureOutcome | undefined;
  if (charged) {
    outcome = await recordChargedFailure(store, claim, error, judged.permanent).catch(
      (recordError: unknown) => {
        emitSafely(events, 'worker:error', { workerId, error: asError(recordError) });
        return undefined;
      },
    );
  }
  // Read before the abort below, which would hide why the worker gave the task up.
  const givenBack = charged
    ? undefined
    : givenBackReason(abortedByWorker ? claim.signal.reason : error);
  taskController.abort(); // the function's leftovers must stop; and no more writes under this claim
  attemptFailed(span, error, {
    charged,
    final: outcome?.final ?? false,
    ...(givenBack === undefined ? {} : { givenBack }),
  });
  emitSafely(events, 'task:failed', {
    task: claim.task,
    plan: claim.plan,
    workerId,
    error: asError(error),
    charged,
    final: outcome?.final ?? false,
    ...thisTry,
    ...(outcome
      ? {
          attempts: outcome.failure.attempts,
          attempt: outcome.failure.attempts,
          maxAttempts: outcome.maxAttempts,
          nextTryAt: outcome.notBefore,
        }
      : {}),
    ...(givenBack === undefined ? {} : { givenBack }),
  });
  // Before the task is given back, while this worker still holds it: see record-cancelled-run.ts.
  if (givenBack === 'cancelled')
    await recordCancelledRun(runtime.zk, store, claim).catch((recordError: unknown) =>
      emitSafely(events, 'worker:error', { workerId, error: asError(recordError) }),
    );
  await releaseOrRetry(runtime, claim, workerId);
  if (outcome?.final === true || dispatcher.isStopped(claim.plan)) return; // failed for good, or its plan stopped: never offered again
  if (error instanceof ShellDisabledError) {
    runtime.leftToOthers.leave(claim.task); // for a worker that allows shell tasks: not offered to this pool's loops again
    return;
  }
  cooldown.recordFailure(claim.task); // left alone here for a while, so it cannot hold up the tasks behind it
  if (outcome !== undefined) dispatcher.offerLater(claim.task, outcome.notBefore.getTime(), true);
  else if (!charged) dispatcher.offerLater(claim.task, cooldown.until(claim.task), false);
}

/** Why the worker gave up a task uncharged, out of the reason its signal was aborted with (or what the try threw). */
function givenBackReason(reason: unknown): TaskGivenBackReason {
  if (reason instanceof DrainTimeoutError) return 'drain';
  if (reason instanceof PlanPausedError) return 'paused';
  if (reason instanceof PlanCancelledError) return 'cancelled';
  if (reason instanceof PlanAbortedError) return 'plan-failed';
  if (reason instanceof OwnershipLostError) return 'session-expired';
  return 'given-back';
}

/** The reason a running task's signal is aborted with when its plan stops. */
function planStopError(reason: PlanStopReason, claim: Claim): Error {
  switch (reason) {
    case 'deleted':
      return new PlanDeletedError(claim.plan, claim.task);
    case 'failed':
      return new PlanAbortedError(claim.plan, claim.task);
    case 'paused':
      return new PlanPausedError(claim.plan, claim.task);
    case 'cancelled':
      return new PlanCancelledError(claim.plan, undefined, claim.task);
  }
}

async function taskExists(runtime: WorkerLoopRuntime, task: string): Promise<boolean> {
  try {
    return (await runtime.zk.exists(task)) !== undefined;
  } catch {
    return true; // unknown: report the failure as usual
  }
}

/**
 * A task from the runnable indexes this process watches, else from the spec's scan of every plan
 * (plans without an index; indexed plans too, once in a while, for entries a crash may have lost).
 */
async function findWork(
  runtime: WorkerLoopRuntime,
  parent: string,
  seeker: Seeker,
): Promise<Claim | undefined> {
  const { dispatcher, store } = runtime;
  await dispatcher.follow(parent);
  const fromIndex = await dispatcher.take(seeker);
  if (fromIndex !== undefined) return fromIndex;
  const fullScan = dispatcher.fullScanDue(parent);
  return await getTaskFromAnyPlan(
    store,
    parent,
    {
      ...seeker,
      skip: (task) =>
        seeker.skip?.(task) === true ||
        dispatcher.book.isHeldOrDone(task) ||
        dispatcher.isWaitingForSlot(task),
    },
    {
      book: dispatcher.book,
      // Its index entry may have gone with a worker that died during the delay: come back at its time.
      onWaitingForRetry: (task, at) => dispatcher.offerLater(task, at, true),
      // A stopped plan is still looked at by the full scan: its `failed` marker may be stale (see getTask).
      skipPlan: (plan) =>
        (dispatcher.isStopped(plan) || dispatcher.isIndexed(plan)) &&
        (!fullScan || dispatcher.isSettled(plan)),
      onOwned: (task) => void dispatcher.watchOwner(task).catch(() => undefined),
      onSettled: (plan) => dispatcher.markSettled(plan),
    },
  );
}

/**
 * Gives the task back. A release that fails (the connection did not come back in time) is tried
 * again in the background while the claim's session lives: an owner node left behind by a live
 * session would keep every worker off the task.
 */
/** Indexes a task that is runnable now (a continued task whose continuation's result came while it was held). */
async function indexIfRunnable(
  runtime: WorkerLoopRuntime,
  task: string,
  workerId: string,
): Promise<void> {
  try {
    const listing = await runtime.store.reads.inspectTask(task);
    if (
      listing === undefined ||
      classifyTask(listing.children, listing.childVersion) !== 'runnable'
    )
      return;
    await runtime.store.markRunnable(task);
    runtime.onRunnable?.([task]);
  } catch (error) {
    // The full scan finds it: an index entry is an optimisation.
    emitSafely(runtime.events, 'worker:error', { workerId, error: asError(error) });
  }
}

async function releaseOrRetry(
  runtime: WorkerLoopRuntime,
  claim: Claim,
  workerId: string,
): Promise<void> {
  try {
    await runtime.store.release(claim);
  } catch (error) {
    runtime.events.emit('worker:error', { workerId, error: asError(error) });
    const retry = (attempt: number): void => {
      if (attempt > RELEASE_RETRIES || !runtime.zk.isCurrent(claim.session)) return;
      setTimeout(
        () => void runtime.store.release(claim).catch(() => retry(attempt + 1)),
        RELEASE_RETRY_MS,
      ).unref();
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

/** Emits a worker event; a listener that throws is reported once as `worker:error`, and never ends the loop. */
function emitSafely<K extends keyof ZkPlanEvents>(
  events: EventEmitter<ZkPlanEvents>,
  name: K,
  ...payload: ZkPlanEvents[K]
): void {
  try {
    (events.emit as (name: K, ...args: ZkPlanEvents[K]) => boolean)(name, ...payload);
  } catch (error) {
    if (name === 'worker:error') return;
    try {
      events.emit('worker:error', { workerId: workerIdOf(payload), error: asError(error) });
    } catch {
      // a worker:error listener that throws too: nothing more to tell
    }
  }
}

function workerIdOf(payload: readonly unknown[]): string {
  const first = payload[0] as { workerId?: unknown } | undefined;
  return typeof first?.workerId === 'string' ? first.workerId : 'unknown';
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}
