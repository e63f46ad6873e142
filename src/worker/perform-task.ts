import type { DependencyContainer } from 'tsyringe';
import { executeFunction, type ExecutionSettings } from '../exec/execute-function.js';
import { spawnCalls, trackSpawnCall } from '../spawn/spawn-calls.js';
import { Continuation } from '../spawn/continuation.js';
import { MAX_NOT_YET_MS, NotYet, makeNotYet, type NotYetOptions } from '../exec/not-yet.js';
import { nextWaiting, type WaitingRecord } from '../store/waiting-record.js';
import { mapOver } from '../spawn/map-over.js';
import { SpawnMismatchError } from '../errors/spawn-errors.js';
import { InvalidArgumentError } from '../errors/usage-errors.js';
import type { TaskSpawner } from '../spawn/task-spawner.js';
import type { TaskDefinition } from '../exec/task-spec.js';
import { decodeValue, encodeValue } from '../serialization/codec.js';
import {
  MalformedNodeError,
  OwnershipLostError,
  TaskExecutionError,
  TaskTimeoutError,
} from '../errors/task-errors.js';
import { isZkError } from '../errors/zk-error.js';
import { ShellDisabledError } from '../errors/shell-errors.js';
import { SHELL_FUNCTION } from '../shell/shell-params.js';
import { IncompleteValueError } from '../errors/value-errors.js';
import {
  ARG_PREFIX,
  ATTEMPTS,
  CONTINUATION,
  WAITING,
  DEP_PREFIX,
  FAILED,
  READY,
  RESULT,
  childPath,
  hasSequentialName,
  isContinuedSerial,
  serialOf,
  sortBySerial,
} from '../zk/layout.js';
import { linkSignals } from '../util/abort-signals.js';
import { failTaskForGood, retryPolicyFor, retryPolicyOf } from './record-failure.js';
import type { PlanSettings } from '../config/plan-options.js';
import type { TaskEventLabels } from './worker-events.js';
import { recordedDefinition, type TaskHistoryRecord } from '../store/task-history.js';
import type { AttemptRecord } from '../store/failure-policy.js';
import type { FailedTry } from '../store/task-tries.js';
import type { Claim, TaskStore } from '../store/task-store.js';
import { PrefetchError } from '../store/claim-prefetch.js';
import type { TaskReader } from '../store/task-reader.js';
import type { Acquired, ConcurrencyLimits, SlotLease } from '../limits/concurrency-limits.js';
import { nameOf, parentOf } from '../zk/layout.js';
import type { TaskLogs } from '../logs/task-logs.js';
import { SILENT_LOGGER } from '../logs/task-log-types.js';
import { asSkip } from '../trigger/skip.js';
import { decideTrigger } from '../trigger/trigger-decision.js';
import { DEFAULT_TRIGGER } from '../trigger/trigger-rule.js';
import { carriesOutcomeMark, outcomeOf, skippedValue } from '../trigger/task-outcome.js';
import { failedInputsOf, type FailedInput } from '../trigger/failed-inputs.js';
import { InputFailedError } from '../errors/trigger-errors.js';
import type { StoredTraceContext } from '../tracing/trace-context.js';

/** What performTask did with a claimed task. */
export type PerformOutcome =
  /** Ran the function, stored, propagated and deleted the task. */
  | 'completed'
  /** A previous owner had stored the result: propagated it and deleted the task. */
  | 'finished-previous'
  /** The task was removed meanwhile (another worker finished it). */
  | 'gone'
  /** The task is no longer runnable (e.g. a deletion is under way): the caller releases it. */
  | 'not-runnable'
  /** Its attempts were used up by earlier tries (a worker died while recording the last one): marked failed. */
  | 'failed'
  /** It had failed for good already (this worker's claim came from a stale look): not run again. */
  | 'failed-already'
  /** Its plan is failFast and has failed: nothing of it starts any more. */
  | 'plan-failed'
  /** Its function handed over with ctx.continueWith: the continuation exists, the task waits for its result (give it back). */
  | 'continued'
  /** Its plan is paused or cancelled (read after the claim): given back, uncharged. */
  | 'plan-halted'
  /** Every slot of its concurrency key is held: given back, uncharged, and offered again when one frees. */
  | 'limit-full'
  /**
   * Its function said "not yet" (ctx.notYet), now (`claim.progress.waitingFor` set) or at a check
   * whose time to check again has not come: given back uncharged, out of the index, offered again
   * at `claim.progress.checkAgainAt`.
   */
  | 'not-yet'
  /**
   * It completed as skipped (`claim.progress.skipped` says why): its function returned
   * `skip(reason)`, or its trigger rule skipped it without running it. Stored, handed on and
   * deleted as a result is.
   */
  | 'skipped';

export interface PerformContext {
  readonly store: TaskStore;
  readonly execution: ExecutionSettings;
  readonly container: DependencyContainer;
  /** Told of dependents that this task's result made runnable, so they are taken at once. */
  readonly onRunnable?: (tasks: readonly string[]) => void;
  /** Cluster-wide concurrency limits; without it, concurrency keys hold nothing back. */
  readonly limits?: ConcurrencyLimits;
  /** Told of a task that found every slot of its key held (`limitPath`): offer it again when one frees. */
  readonly onLimitFull?: (task: string, limitPath: string) => void;
  /** Told that this process freed a slot under `limitPath`: a task waiting for it may start now. */
  readonly onSlotFreed?: (limitPath: string) => void;
  /** The process's view of plans' pause and cancel (Dispatcher): when it vouches for a plan, the control node is not read after a claim. */
  readonly controlView?: {
    knownUnhalted(plan: string): boolean;
    controlAbsent(plan: string, readAt: number): void;
  };
  /** Keeps what the task logs; without it, `ctx.log` lines go nowhere. */
  readonly taskLogs?: TaskLogs;
  /** Adds the tasks a running task spawns (`ctx.spawn`). */
  readonly spawner: TaskSpawner;
}

/** What a worker knows of a try as its function starts: for its `task:started` event and the lines that follow. */
export type TryStart = TaskEventLabels & { readonly fn: string; readonly attempt: number };

/** What the worker opened for a try as it started (its span): the function runs inside it. */
export interface TryScope {
  run<T>(fn: () => T): T;
}

/**
 * Told as a try's function starts, with the plan's stored trace context (the parent of the try's
 * span); what it answers, the function runs inside.
 */
export type OnTryStart = (
  start: TryStart,
  trace: StoredTraceContext | undefined,
) => TryScope | undefined;

/**
 * The spec's `perform-task`, on a task this worker owns: reuse a stored result if there is one,
 * otherwise run the function on the task's arguments and store its result; then propagate the
 * result to every dependent and delete the task. `onStart` is told when the function starts, with
 * what was read to run it (no read of its own); `onSkippedUnrun`, with the same, when its trigger
 * rule skipped it without running it.
 *
 * Each step below reads or writes ZooKeeper in the order a crash must find them: a step starts
 * only once the one before it has answered, and the checks between them decide whether to go on.
 */
export async function performTask(
  claim: Claim,
  context: PerformContext,
  onStart?: OnTryStart,
  onSkippedUnrun?: (labels: TryStart, trace: StoredTraceContext | undefined) => void,
): Promise<PerformOutcome> {
  const read = await readClaimedTask(claim, context.store);
  if (typeof read === 'string') return read;
  const { children, definition } = read;
  const keepResult = !(definition instanceof PrefetchError) && definition.keepResult === true;

  if (children.includes(RESULT)) {
    const handedOn = await handOnStoredResult(claim, context, read, keepResult);
    if (handedOn !== undefined) return handedOn;
  }
  if (definition instanceof PrefetchError) throw definition.error;
  if (!children.includes(READY) || children.some((name) => hasSequentialName(name, DEP_PREFIX)))
    return 'not-runnable';
  // Its continuation's result arrived: it is this task's own, handed on without running the function again.
  const continued = children.find((name) => isContinuedSerial(serialOf(name, ARG_PREFIX)));
  if (continued !== undefined)
    return await finishContinued(claim, context, { children, definition }, continued, keepResult);
  // Given back before any input is read or slot taken, uncharged: the worker leaves it to one that allows shell tasks.
  if ('fn' in definition && definition.fn === SHELL_FUNCTION && !context.execution.allowShell)
    throw new ShellDisabledError(claim.task);

  const earlier = await countFailedTries(claim, context.store, children, definition);
  if (typeof earlier === 'string') return earlier;
  const { failedTries, previousTries } = earlier;
  // Its function said "not yet" at its last check, and the time to check again has not come: out
  // of the index until then (a worker that recorded the wait and died before it unindexed the task
  // left it there), and offered again at that time.
  const waiting = children.includes(WAITING) ? await readWaiting(claim, context) : undefined;
  if (waiting !== undefined && waiting.notBefore.getTime() > Date.now()) {
    await context.store.unmarkRunnable(claim.task, { fence: claim.session });
    claim.progress.checkAgainAt = waiting.notBefore;
    return 'not-yet';
  }
  if (claim.signal.aborted) throw claim.signal.reason; // the worker gave it up before it started (stop, failFast)
  const control = planControl(claim, context);
  const inputs = await readInputs(claim, context, children, control);
  if (inputs.args === undefined) return 'gone';
  const stopped = await planStopsTask(claim, context.store, inputs, control);
  if (stopped !== undefined) return stopped;
  const tried: RunningTry = {
    claim,
    context,
    definition,
    settings: inputs.settings,
    failedTries,
    previousTries,
  };
  // How its inputs ended decides whether it runs at all (its trigger rule, src/trigger).
  const decision = decideTrigger(definition.trigger ?? DEFAULT_TRIGGER, claim.task, inputs.args);
  // The inputs that came as failures: their links are gone, so its history record keeps them.
  const failedInputs =
    definition.trigger === undefined
      ? []
      : failedInputsOf(claim.task, sortBySerial(children, ARG_PREFIX), inputs.args);
  if (failedInputs.length > 0) tried.failedInputs = failedInputs;
  if (decision.kind === 'blocked')
    throw new InputFailedError(claim.task, definition.key, decision.failure);
  if (decision.kind === 'skip') {
    const skipped = skippedValue(decision.reason, decision.origin);
    await storeResult(
      tried,
      { value: skipped, startedAt: new Date() },
      inputs.links,
      keepResult,
      decision.why,
    );
    claim.progress.skipped = decision.why;
    onSkippedUnrun?.(tryStart(definition, inputs.settings, failedTries), inputs.settings.trace);
    return 'skipped';
  }
  // A slot of its key's limit, held from here until the function returns (src/limits).
  const slot =
    definition.concurrencyKey === undefined
      ? undefined
      : await acquireSlot(claim, definition.concurrencyKey, context);
  if (slot?.kind === 'full') return 'limit-full';
  const lease = slot?.kind === 'held' ? slot.lease : undefined;
  const stoppedNow = await stoppedBeforeStart(claim, context, control, {
    waitedForSlot: definition.concurrencyKey !== undefined,
    haltedRead: inputs.haltedRead,
  });
  if (stoppedNow !== undefined) {
    if (lease !== undefined) await releaseSlot(lease, context);
    if (stoppedNow === 'owner-gone')
      throw new OwnershipLostError(
        claim.task,
        'its owner node went while it waited for a slot of its concurrency key',
      );
    return stoppedNow;
  }
  const ran = await runTry(tried, decision.args, lease, onStart);
  if (ran.value instanceof Continuation) {
    await handOver(claim, context, ran.value);
    return 'continued';
  }
  // An earlier run handed over: its continuation exists and will feed this task, so no value of its own may.
  if (children.includes(CONTINUATION))
    throw new SpawnMismatchError(claim.task, 'continuation', await recordedFns(claim, context), []);
  if (ran.value instanceof NotYet) {
    claim.progress.checkAgainAt = await waitAgain(claim, context, ran.value, waiting);
    claim.progress.waitingFor = ran.value.reason;
    return 'not-yet';
  }
  const skipped = asSkip(ran.value);
  if (skipped !== undefined) {
    const { reason } = skipped;
    await storeResult(
      tried,
      { ...ran, value: skippedValue(reason, claim.task) },
      inputs.links,
      keepResult,
      reason,
    );
    claim.progress.skipped = reason;
    return 'skipped';
  }
  if (carriesOutcomeMark(ran.value))
    throw new TaskExecutionError(
      claim.task,
      'it returned an object with a "zk-plan:outcome" field, which marks skipped and failed inputs: return skip(reason) to skip, or a value without that field',
      undefined,
    );
  await storeResult(tried, ran, inputs.links, keepResult);
  return 'completed';
}

/**
 * The task's record of its last "not yet"; undefined when it has none, or one that is not a valid
 * record (anyone may write it: it is then ignored, and the next "not yet" replaces it). A time to
 * check again further off than a `ctx.notYet` can ask for is not waited for.
 */
async function readWaiting(
  claim: Claim,
  context: PerformContext,
): Promise<WaitingRecord | undefined> {
  try {
    const waiting = await context.store.reads.readWaiting(claim.task);
    if (waiting === undefined || waiting.notBefore.getTime() > Date.now() + MAX_NOT_YET_MS)
      return undefined;
    return waiting;
  } catch (error) {
    if (error instanceof MalformedNodeError) return undefined;
    throw error;
  }
}

/**
 * The function said "not yet": records why (`waiting`, with the time to check again) under the
 * claim, then takes the task out of the runnable index; resolves the time to check again. A crash
 * before the record leaves the task as it was (the next check runs at once); after it, the task
 * is given back unrun until that time, by whichever worker claims it. A "not yet" of another task's
 * making is the try's failure.
 */
async function waitAgain(
  claim: Claim,
  context: PerformContext,
  notYet: NotYet,
  previous: WaitingRecord | undefined,
): Promise<Date> {
  if (notYet.task !== claim.task)
    throw new TaskExecutionError(
      claim.task,
      `it returned a ctx.notYet made by task ${notYet.task}: return the one its own ctx.notYet made`,
      undefined,
    );
  const record = nextWaiting(previous, notYet.reason, Date.now(), notYet.afterMs);
  await context.store.writeWaiting(claim, record);
  await context.store.unmarkRunnable(claim.task, { fence: claim.session });
  return record.notBefore;
}

/**
 * Makes the continuation the function returned (TaskSpawner.handOver) and takes the task out of
 * the runnable index: from now on it waits for the continuation's result (its link input). The
 * hand-over is tracked as spawn calls are, so the claim is given back only once it settled. What
 * the function asked for wrongly (a continuation of another task, an input that does not exist, a
 * key taken, another function than an earlier run's) is the try's failure.
 */
async function handOver(
  claim: Claim,
  context: PerformContext,
  continuation: Continuation,
): Promise<void> {
  claim.progress.continuedBy = await asTryFailure(claim, async () => {
    if (continuation.from !== claim.task)
      throw new InvalidArgumentError(
        'result',
        `task ${claim.task} returned a continuation made by task ${continuation.from}: return the one its own ctx.continueWith made`,
      );
    const made = await trackSpawnCall(claim, context.spawner.handOver(claim, continuation.entry));
    claim.progress.spawned = (claim.progress.spawned ?? 0) + 1;
    return made;
  });
  await context.store.unmarkRunnable(claim.task, { fence: claim.session });
}

/**
 * Runs a step the worker takes for the function (a hand-over, a map): what it refuses is the
 * try's failure, charged as if the function had thrown it (TaskExecutionError); faults of
 * ZooKeeper and lost ownership are not the task's, and pass as they are.
 */
async function asTryFailure<T>(claim: Claim, step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (error) {
    if (isZkError(error) || error instanceof OwnershipLostError || claim.signal.aborted)
      throw error;
    throw new TaskExecutionError(
      claim.task,
      error instanceof Error ? error.message : String(error),
      error,
    );
  }
}

/** The function an earlier run handed over to (for SPAWN_MISMATCH), as its record says. */
async function recordedFns(claim: Claim, context: PerformContext): Promise<readonly string[]> {
  return (await context.spawner.readHandOver(claim.task))?.fns ?? [];
}

/**
 * A task whose continuation's result arrived (`continued`, the arg of its link input): that
 * result is the task's own. Stored, kept (keepResult) and handed to the task's dependents as every
 * result is, with a history record naming the continuation; the function does not run again.
 */
async function finishContinued(
  claim: Claim,
  context: PerformContext,
  { children, definition }: { children: readonly string[]; definition: TaskDefinition },
  continued: string,
  keepResult: boolean,
): Promise<'completed' | 'skipped'> {
  const { store } = context;
  const inputPath = childPath(claim.task, continued);
  const [encoded, links, settings, attempts, handedOver] = await Promise.all([
    store.reads.readStoredValue(inputPath, context.execution.maxResultBytes),
    store.reads.readLinks(claim.task, children),
    store.reads.readPlanSettings(claim.plan),
    children.includes(ATTEMPTS) ? store.reads.readAttempts(claim.task) : undefined,
    context.spawner.readHandOver(claim.task),
  ]);
  if (encoded === undefined)
    throw new OwnershipLostError(claim.task, `its continuation's result ${inputPath} vanished`);
  // A malformed value is refused before it is handed on; a skipped continuation skips this task too.
  const outcome = outcomeOf(decodeValue(inputPath, encoded));
  const skipped =
    outcome.status === 'skipped' ? `its continuation was skipped: ${outcome.reason}` : undefined;
  // The record names it once its paths were written; before that (its writer died after the
  // commit, and the workers completed the batch), the batch's marker does.
  const continuedBy =
    handedOver === undefined
      ? undefined
      : (handedOver.tasks ??
          (await context.spawner.committedTasks(claim.plan, handedOver.batch)))?.[0];
  const history: TaskHistoryRecord | undefined = settings.history
    ? {
        state: 'done',
        ...recordedDefinition(definition),
        outputs: [...links.values()],
        finishedAt: new Date(),
        failedTries: attempts?.failures ?? 0,
        ...triesOf(attempts),
        ...(continuedBy === undefined ? {} : { continuedBy }),
        ...(skipped === undefined ? {} : { skipped }),
      }
    : undefined;
  await store.finish(claim, encoded, {
    keepResult,
    storeMaxBytes: context.execution.maxResultBytes,
    links,
    ...(context.onRunnable ? { onRunnable: context.onRunnable } : {}),
    ...(history ? { history } : {}),
  });
  if (skipped === undefined) return 'completed';
  claim.progress.skipped = skipped;
  return 'skipped';
}

/** A claimed task's children and definition, as read right behind the claim. */
interface ClaimedTask {
  readonly children: readonly string[];
  /** A PrefetchError when it could not be read, yet a stored result can still be handed on. */
  readonly definition: TaskDefinition | PrefetchError;
}

/**
 * Reads the task's children and definition (or takes what the claim prefetched), and tells when
 * there is nothing to do: the task is gone, or it failed for good already.
 */
async function readClaimedTask(
  claim: Claim,
  store: TaskStore,
): Promise<ClaimedTask | 'gone' | 'failed-already'> {
  // Two independent reads, sent together.
  const [listing, definition] = await (claim.prefetched ??
    Promise.all([
      store.reads.inspectTask(claim.task),
      store.reads.readDefinition(claim.task).catch((error: unknown) => new PrefetchError(error)),
    ]));
  if (listing === undefined) return 'gone';
  const children = listing.children;
  if (children.includes(FAILED)) return 'failed-already'; // read behind the claim: no run can follow a failure for good
  if (definition instanceof PrefetchError) {
    // A malformed definition matters only if the function must run; a stored result can still be handed on.
    if (!children.includes(RESULT)) throw definition.error;
  }
  if (definition === undefined) return 'gone';
  return { children, definition };
}

/**
 * A task with a `result` child: a previous owner stored its result. Hands it on and deletes the
 * task; undefined when that write had stopped half-way, discarded now, so the function runs again.
 */
async function handOnStoredResult(
  claim: Claim,
  context: PerformContext,
  { children, definition }: ClaimedTask,
  keepResult: boolean,
): Promise<'finished-previous' | undefined> {
  const { store } = context;
  const stored = await readStoredResult(store, claim.task, context.execution.maxResultBytes);
  if (stored !== undefined) {
    // A skip a dead worker stored is still a skip: its record and its event say so.
    const outcome = outcomeOf(decodeValue(childPath(claim.task, RESULT), stored));
    if (outcome.status === 'skipped') claim.progress.skipped = outcome.reason;
    // Its `ready` is still there, so its history record may not be (the record goes before `ready`): kept now, as far as it is known.
    const history =
      children.includes(READY) && !(definition instanceof PrefetchError)
        ? await handedOnRecord(store, claim, children, definition, claim.progress.skipped)
        : undefined;
    await store.finish(claim, stored, {
      keepResult,
      refeed: true,
      ...(context.onRunnable ? { onRunnable: context.onRunnable } : {}),
      ...(history ? { history } : {}),
    });
    return 'finished-previous';
  }
  if (!children.includes(READY)) {
    // A deletion stopped half-way through the result: every dependent was fed before it started.
    await store.deleteTask(claim, undefined);
    return 'finished-previous';
  }
  await store.discardResult(claim); // a write that stopped half-way: run the function again
  return undefined;
}

/**
 * The task's earlier failed tries, or what became of it instead: marked failed when they used up
 * its attempts, not runnable while its retry delay is not over.
 */
async function countFailedTries(
  claim: Claim,
  store: TaskStore,
  children: readonly string[],
  definition: TaskDefinition,
): Promise<
  { failedTries: number; previousTries: readonly FailedTry[] } | 'failed' | 'not-runnable'
> {
  if (!children.includes(ATTEMPTS)) return { failedTries: 0, previousTries: [] };
  const attempts = await store.reads.readAttempts(claim.task);
  // Its final try is recorded (no retry may follow it, or none is left): the worker that recorded
  // it died before it could finish failing the task.
  if (
    attempts !== undefined &&
    (!attempts.lastFailure.retryable ||
      attempts.failures >= (await retryPolicyFor(store, claim.plan, definition)).maxAttempts)
  ) {
    await failTaskForGood(store, claim, attempts.lastFailure, definition.key);
    return 'failed';
  }
  if (attempts !== undefined && attempts.notBefore.getTime() > Date.now()) return 'not-runnable'; // its retry delay is not over
  return { failedTries: attempts?.failures ?? 0, previousTries: attempts?.tries ?? [] };
}

/**
 * Why the function must not start after all, looked at right before it starts; undefined when it
 * may. A pause or cancel may land during the awaits since the first check (a slot of its key
 * waited for; a worker cut off for a while hears it only now): unless the process's view vouches
 * for the plan now, the plan is looked at again, its control node and whether it still exists (a
 * cancelled plan may be deleted meanwhile). Nothing is read while the view vouches, nor for a task
 * that awaited nothing since a check that read.
 *
 * A task that waited for a slot also reads its owner node: a cancel or a deletion of the plan
 * deletes the task with its owner node, and a deletion removes the plan's control node before the
 * plan node, so a plan read half-way through its deletion looks neither halted nor gone. The
 * owner node says for certain whether the claim still holds.
 */
async function stoppedBeforeStart(
  claim: Claim,
  context: PerformContext,
  control: PlanControl,
  { waitedForSlot, haltedRead }: { waitedForSlot: boolean; haltedRead: boolean | undefined },
): Promise<'plan-halted' | 'gone' | 'owner-gone' | undefined> {
  const lookAtPlan = (haltedRead === undefined || waitedForSlot) && !control.vouched();
  if (!lookAtPlan && !waitedForSlot) return undefined;
  const { reads } = context.store;
  const [halted, present, ownerSession] = await Promise.all([
    lookAtPlan ? control.read() : false,
    lookAtPlan ? reads.planExists(claim.plan) : true,
    waitedForSlot ? reads.ownerSessionOf(claim.task) : claim.session.id,
  ]);
  if (!present) return 'gone';
  if (ownerSession !== claim.session.id)
    return (await reads.inspectTask(claim.task)) === undefined ? 'gone' : 'owner-gone';
  return halted ? 'plan-halted' : undefined;
}

/** Whether the plan is paused or cancelled: vouched for by the process's watch, or read from its control node. */
interface PlanControl {
  /** True when the process's view of the plan vouches that it is neither paused nor cancelled. */
  vouched(): boolean;
  /** Reads the plan's control node; tells the process's view when it is absent. */
  read(): Promise<boolean>;
}

function planControl(claim: Claim, context: PerformContext): PlanControl {
  return {
    vouched: () => context.controlView?.knownUnhalted(claim.plan) === true,
    read: async () => {
      const readAt = performance.now();
      const halted = await context.store.reads.isPlanHalted(claim.plan);
      if (!halted) context.controlView?.controlAbsent(claim.plan, readAt);
      return halted;
    },
  };
}

/**
 * What the function needs and the plan's state, read together once the task is known runnable:
 * its arguments (undefined when the task is gone), its dependents' links, the plan's settings, and
 * its control node unless the process's view vouches for the plan. The task's ACLs are checked in
 * the same round.
 */
async function readInputs(
  claim: Claim,
  context: PerformContext,
  children: readonly string[],
  control: PlanControl,
) {
  const { store } = context;
  // What the claim prefetched in its own round trip is used, and only what it did not is read now.
  const early = claim.prefetchedInputs;
  const [args, links, settings, haltedRead] = await Promise.all([
    store.reads.readArgs(claim.task, children, context.execution.maxResultBytes, early?.values),
    store.reads.readLinks(claim.task, children, early?.links),
    store.reads.readPlanSettings(claim.plan),
    control.vouched() ? undefined : control.read(),
    store.reads.assertOwnAcls(claim.plan, claim.task, early?.ownAcl),
  ]);
  return { args, links, settings, haltedRead };
}

/** Why the task must not start although it is runnable: its plan is paused, cancelled, or failed (failFast); undefined otherwise. */
async function planStopsTask(
  claim: Claim,
  store: TaskStore,
  { settings, haltedRead }: { settings: PlanSettings; haltedRead: boolean | undefined },
  control: PlanControl,
): Promise<'plan-halted' | 'plan-failed' | undefined> {
  // A pause or cancel acknowledged before the claim is seen, whatever the watch said: either the control node is read after
  // the claim (the session's order), or the process's plan watch has not fired since its last read: every pause and cancel
  // touches the plan node after its record, and ZooKeeper delivers that notification before the reply to the claim (a write
  // ordered after the touch) and to what this session sent after it.
  const halted = haltedRead ?? (control.vouched() ? false : await control.read());
  if (halted) return 'plan-halted';
  // Read after the claim: a plan that failed before it is seen, whatever the process's watch said.
  if (settings.failurePolicy === 'failFast' && (await store.reads.isPlanFailed(claim.plan)))
    return 'plan-failed';
  return undefined;
}

/** A try about to run: the claim, what was read to run it, and how many tries failed before it. */
interface RunningTry {
  readonly claim: Claim;
  readonly context: PerformContext;
  readonly definition: TaskDefinition;
  readonly settings: PlanSettings;
  readonly failedTries: number;
  /** The failed tries its `attempts` record lists, copied into its history record. */
  readonly previousTries: readonly FailedTry[];
  /** Its inputs that came as failures, for its history record. */
  failedInputs?: readonly FailedInput[];
}

/**
 * Runs the function with the task's log open and its timeout, then frees its slot and writes its
 * last log lines, whether it returned or threw.
 */
async function runTry(
  { claim, context, definition, settings, failedTries }: RunningTry,
  args: readonly unknown[],
  lease: SlotLease | undefined,
  onStart: OnTryStart | undefined,
): Promise<{ value: unknown; startedAt: Date }> {
  let value: unknown;
  let startedAt = new Date();
  const attempt = failedTries + 1;
  const log = context.taskLogs?.open({
    plan: claim.plan,
    task: claim.task,
    ...(definition.key === undefined ? {} : { key: definition.key }),
    ...(settings.name === undefined ? {} : { planName: settings.name }),
    attempt,
    workerId: claim.workerId,
    sessionId: claim.session.id,
  });
  try {
    // The reads above may have waited out a reconnection in which the claim's session expired: never start on a lost claim.
    if (claim.signal.aborted) throw claim.signal.reason;
    startedAt = new Date();
    claim.progress.tryStartedAt = startedAt;
    const scope = onStart?.(tryStart(definition, settings, failedTries), settings.trace);
    const spawning = spawnCalls(claim, context.spawner);
    const ctx = {
      container: context.container,
      task: claim.task,
      plan: claim.plan,
      workerId: claim.workerId,
      log: log?.logger ?? SILENT_LOGGER,
      attempt,
      spawn: spawning.spawn,
      continueWith: spawning.continueWith,
      notYet: (reason: string, options?: NotYetOptions) => makeNotYet(claim.task, reason, options),
    };
    const run = (signal: AbortSignal): Promise<unknown> =>
      executeFunction(definition, { ...ctx, signal }, args, context.execution, claim.session);
    try {
      const logged = (signal: AbortSignal): Promise<unknown> =>
        log ? log.run(() => run(signal)) : run(signal);
      value = await withTimeout(claim, definition.timeoutMs, (signal) =>
        scope === undefined ? logged(signal) : scope.run(() => logged(signal)),
      );
      // A mapping task's list becomes a task per item and a hand-over to their reduce.
      const { map } = definition;
      // A "not yet" or a skip is no list: the worker acts on it as it is.
      if (map !== undefined && !(value instanceof NotYet) && asSkip(value) === undefined)
        value = await asTryFailure(claim, () =>
          mapOver(value, map, definition.reduce, {
            task: claim.task,
            key: definition.key,
            spawn: spawning.spawn,
            continueWith: spawning.continueWith,
          }),
        );
    } finally {
      // A spawn call the function did not wait for still writes under this task: the task is
      // finished (its records deleted) or given back only once it settled; none starts after.
      spawning.close();
      await spawning.settled();
    }
  } finally {
    if (lease !== undefined) await releaseSlot(lease, context);
    await log?.finish(); // the last lines are in ZooKeeper before the try's completion or failure is
  }
  return { value, startedAt };
}

/**
 * Stores the function's result, with its history record if the plan keeps one, hands it to the
 * dependents and deletes the task. `skipped`: the value is a skip's, and this is why.
 */
async function storeResult(
  { claim, context, definition, settings, failedTries, previousTries, failedInputs }: RunningTry,
  { value, startedAt }: { value: unknown; startedAt: Date },
  links: Awaited<ReturnType<TaskReader['readLinks']>>,
  keepResult: boolean,
  skipped?: string,
): Promise<void> {
  const encoded = encodeValue(
    value,
    `The result of task ${claim.task}`,
    claim.task,
    Number.POSITIVE_INFINITY,
  );
  const history: TaskHistoryRecord | undefined = settings.history
    ? {
        state: 'done',
        ...recordedDefinition(definition),
        outputs: [...links.values()],
        startedAt,
        finishedAt: new Date(),
        workerId: claim.workerId,
        failedTries,
        ...(previousTries.length > 0 ? { tries: previousTries } : {}),
        ...(skipped === undefined ? {} : { skipped }),
        ...(failedInputs === undefined ? {} : { failedInputs }),
      }
    : undefined;
  await context.store.finish(claim, encoded, {
    keepResult,
    storeMaxBytes: context.execution.maxResultBytes,
    links,
    ...(context.onRunnable ? { onRunnable: context.onRunnable } : {}),
    ...(history ? { history } : {}),
  });
}

/** The try about to start: its function, key, plan name and number, out of what performTask read. */
function tryStart(
  definition: TaskDefinition,
  settings: PlanSettings,
  failedTries: number,
): TryStart {
  return {
    fn: 'fn' in definition ? definition.fn : 'inline',
    ...(definition.key === undefined ? {} : { key: definition.key }),
    ...(settings.name === undefined ? {} : { planName: settings.name }),
    attempt: failedTries + 1,
    ...maxAttemptsOf(settings, definition),
  };
}

/** The tries the task's policy allows; none when its own retry policy is malformed (the run goes on: the failure path reports it). */
function maxAttemptsOf(
  settings: PlanSettings,
  definition: TaskDefinition,
): { maxAttempts?: number } {
  try {
    return { maxAttempts: retryPolicyOf(settings, definition).maxAttempts };
  } catch {
    return {};
  }
}

/**
 * The record of a task whose result a worker that died had stored, now handed on by this one: who
 * ran it and when it started went with that worker; it finished (for the plan) now. Undefined when
 * the plan keeps no history.
 */
async function handedOnRecord(
  store: TaskStore,
  claim: Claim,
  children: readonly string[],
  definition: TaskDefinition,
  skipped: string | undefined,
): Promise<TaskHistoryRecord | undefined> {
  if (!(await store.reads.readPlanSettings(claim.plan)).history) return undefined;
  const [links, attempts] = await Promise.all([
    store.reads.readLinks(claim.task, children),
    children.includes(ATTEMPTS)
      ? store.reads.readAttempts(claim.task).catch(() => undefined)
      : undefined,
  ]);
  return {
    state: 'done',
    ...recordedDefinition(definition),
    outputs: [...links.values()],
    finishedAt: new Date(),
    failedTries: attempts?.failures ?? 0,
    ...triesOf(attempts),
    ...(skipped === undefined ? {} : { skipped }),
  };
}

/** The failed tries an `attempts` record lists, as a history record keeps them (none: no field). */
function triesOf(attempts: AttemptRecord | undefined): { tries?: readonly FailedTry[] } {
  const tries = attempts?.tries ?? [];
  return tries.length > 0 ? { tries } : {};
}

async function acquireSlot(
  claim: Claim,
  key: string,
  context: PerformContext,
): Promise<Acquired | undefined> {
  if (context.limits === undefined) return undefined;
  const acquired = await context.limits.acquire(
    parentOf(claim.plan),
    key,
    { task: claim.task, workerId: claim.workerId, at: new Date() },
    claim.session,
  );
  if (acquired.kind === 'full') context.onLimitFull?.(claim.task, acquired.limitPath);
  return acquired;
}

/** Frees the slot as soon as the function returned (a lease retries a failed delete while its session lives). */
async function releaseSlot(lease: SlotLease, context: PerformContext): Promise<void> {
  if (await lease.release()) context.onSlotFreed?.(parentOf(lease.path));
}

/**
 * The stored result, or undefined when its write (or deletion) stopped half-way. A result that is
 * not one a writer makes (MalformedNodeError) is thrown: the task fails for good, charged.
 */
async function readStoredResult(
  store: TaskStore,
  task: string,
  maxBytes: number,
): Promise<Buffer | undefined> {
  try {
    return await store.reads.readEncodedResult(task, maxBytes);
  } catch (error) {
    if (error instanceof IncompleteValueError) return undefined;
    throw error;
  }
}

/**
 * Runs `run` with the claim's signal, and when `timeoutMs` is set, rejects with TaskTimeoutError
 * after that long, aborting the signal the function sees (a function that ignores it runs on,
 * but its result is not used).
 */
async function withTimeout<T>(
  claim: Claim,
  timeoutMs: number | undefined,
  run: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  if (timeoutMs === undefined) return await run(claim.signal);
  const timeout = new AbortController();
  const timer = setTimeout(
    () => timeout.abort(new TaskTimeoutError(claim.task, timeoutMs)),
    timeoutMs,
  );
  const timedOut = new Promise<never>((_, reject) =>
    timeout.signal.addEventListener('abort', () => reject(timeout.signal.reason as Error), {
      once: true,
    }),
  );
  const signal = linkSignals(claim.signal, timeout.signal);
  try {
    return await Promise.race([run(signal.signal), timedOut]);
  } finally {
    clearTimeout(timer);
    signal.dispose();
  }
}
