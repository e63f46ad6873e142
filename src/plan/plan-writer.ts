import { assertListingFits } from './plan-listing-limit.js';
import { DEFAULTS } from '../config/defaults.js';
import { takesOutcomes } from '../trigger/trigger-rule.js';
import { failedValue } from '../trigger/task-outcome.js';
import { inputFailureOf } from '../trigger/failure-hand-on.js';
import type { TaskFailure } from '../store/failure-policy.js';
import type { InputFailure } from '../trigger/task-outcome.js';
import { InputFailedError } from '../errors/trigger-errors.js';
import {
  ArgTaskNotFoundError,
  ForeignArgTaskError,
  PlanNotFoundError,
} from '../errors/plan-errors.js';
import { UnknownFunctionError } from '../errors/task-errors.js';
import { ShellParamsError } from '../errors/shell-errors.js';
import { SHELL_FUNCTION, shellParamsProblem } from '../shell/shell-params.js';
import { COLLECT_FUNCTION } from '../spawn/collect-function.js';
import { WAIT_FOR_PLAN_FUNCTION, checkTarget } from '../dependent/dependency-target.js';
import { SUB_PLAN_FUNCTION, checkSubPlan } from '../subplan/sub-plan-target.js';
import { listSubPlans } from '../subplan/sub-plan-record.js';
import { InvalidArgumentError } from '../errors/usage-errors.js';
import { isZkError } from '../errors/zk-error.js';
import type { FunctionRegistry } from '../exec/function-registry.js';
import { assertTaskSpec, toDefinition, type TaskSpec } from '../exec/task-spec.js';
import { assertKnownKeys } from '../config/option-checks.js';
import {
  planSettingsFrom,
  TASK_TO_ADD_KEYS,
  resolvePlanSettings,
  type PlanOptions,
} from '../config/plan-options.js';
import { decodeValue, encodeValue } from '../serialization/codec.js';
import type { TaskStore } from '../store/task-store.js';
import type { BuilderStamp, TaskStamp } from '../store/task-reader.js';
import { DuplicateTaskKeyError } from '../errors/task-key-errors.js';
import { TaskKeyClaims } from './task-key-claims.js';
import { TaskKeys } from './task-keys.js';
import type { WriteOptions, ZkSession } from '../zk/zk-client-types.js';
import { classifyTask } from '../store/task-state.js';
import {
  ATTEMPTS,
  WAITING,
  CONTINUATION_LINK,
  DEP_PREFIX,
  FAILED,
  PLAN_PREFIX,
  PROV_PREFIX,
  READY,
  RESULT,
  RUNNABLE_INDEX,
  HISTORY,
  TASK_KEYS,
  TASK_PREFIX,
  batchMarkerName,
  builderNodeName,
  hasSequentialName,
  assertSequentialPath,
  assertValidPath,
  childPath,
  keptResultPathFor,
  parentOf,
} from '../zk/layout.js';
import type { Zk } from '../zk/zk.js';
import { writeValue } from '../zk/chunked-value.js';
import { taskSettings, type AddTaskOptions, type TaskToAdd } from '../config/task-options.js';

import { IncompleteValueError } from '../errors/value-errors.js';
import { startPlanSpan, traceField, tracingLoading } from '../tracing/tracing.js';
import { ATTR_PLAN_PATH } from '../tracing/attributes.js';

/** What an imported task starts with (encoded values): its stored result (a worker hands it on without running the function), or its failure. */
export interface TaskPreset {
  readonly result?: Buffer;
  readonly failure?: Buffer;
}

/** A batch's task, encoded, with its args, its key and whether it has a priority of its own. */
type PreparedTask = {
  definition: Buffer;
  args: readonly (string | number)[];
  key: string | undefined;
  prioritized: boolean;
  /** Its trigger rule takes its inputs' failures (src/trigger): a failed input is handed to it. */
  takesFailures: boolean;
};

/** How zk-plan's own callers build a batch (submitPlan, a schedule's tick, snapshots.import); `addTasks` of the API passes nothing. */
export interface BatchContext {
  /** The session of a claim the caller holds (a schedule's tick): every write of the batch is fenced by it, so nothing lands once it has expired. */
  readonly claimSession?: ZkSession;
  /** What imported tasks start with, by their index in the batch. */
  readonly presets?: ReadonlyMap<number, TaskPreset>;
  /** The tasks' keys are their spec's (unique by the spec, recorded in the spec record): not claimed one by one. */
  readonly specKeys?: boolean;
  /** A running task's `ctx.spawn` call (src/spawn/task-spawner.ts). */
  readonly spawn?: SpawnBatch;
}

/**
 * How a `ctx.spawn` call's batch differs from others: its id was recorded under the spawning task
 * before it began, it is committed by a `batch-<id>` marker even for one task, the marker holds the
 * tasks' paths (`{ tasks }`), and `committed` records them under the spawning task before anything
 * is made ready. Whoever re-runs the task after a crash finds the paths in the record, or in the
 * marker while the record lacks them.
 */
export interface SpawnBatch {
  readonly batch: string;
  readonly committed: (paths: readonly string[]) => Promise<void>;
  /**
   * A `ctx.continueWith` hand-over: the input (`<spawner>/dep-<continued serial>`) that the
   * batch's one task feeds with its result. The task's link to it and then the input itself are
   * created before the commit.
   */
  readonly continues?: string;
}

/** How many (session, plan) pairs remember that their builder node exists. */
const BUILDER_CACHE_SIZE = 10_000;

/** The ZooKeeper writes that build plans: plan and task nodes, dependencies, ready markers. */
export class PlanWriter {
  private readonly builders = new Set<string>();
  /** Plans whose settings are known to say that some task has its own priority. */
  private readonly prioritizedPlans = new Set<string>();
  private batchSerial = 0;
  /** The batches this writer is writing right now: a task of one of them holding a key is not a leftover. */
  private readonly building = new Set<string>();
  private readonly keyClaims: TaskKeyClaims;

  constructor(
    private readonly zk: Zk,
    private readonly store: TaskStore,
    private readonly functions: FunctionRegistry,
    keys: TaskKeys = new TaskKeys(zk),
    /** The ensemble's jute.maxbuffer: a plan's child listing must fit in it (plan-listing-limit.ts). */
    private readonly juteMaxBufferBytes: number = DEFAULTS.juteMaxBufferBytes,
  ) {
    this.keyClaims = new TaskKeyClaims(zk, store, keys);
  }

  /** The spec's `create-plan`: a new persistent sequential `plan-` node under `parent` (created if missing); `marks` are stored beside its settings. */
  async createPlan(
    parent: string,
    options: PlanOptions = {},
    marks: Readonly<Record<string, unknown>> = {},
  ): Promise<string> {
    assertValidPath('parent', parent);
    const settings = resolvePlanSettings(options);
    const loading = tracingLoading();
    if (loading !== undefined) await loading;
    const traced = startPlanSpan({ parent, name: settings.name });
    try {
      await this.zk.ensurePath(parent);
      const plan = await this.zk.create(
        childPath(parent, PLAN_PREFIX),
        encodeValue({ ...marks, ...settings, ...traceField(traced) }, 'plan settings'),
        'persistent-sequential',
      );
      traced?.span.set(ATTR_PLAN_PATH, plan);
      await this.createPlanChildren(plan, settings.history, {});
      traced?.span.succeeded();
      return plan;
    } catch (error) {
      traced?.span.failed(error);
      throw error;
    }
  }

  /**
   * A plan at a path chosen by the caller (a schedule's tick names its plan, so that a second
   * firing of the tick finds it instead of making another), its node naming its `origin` from the
   * first write on. Fails with NODE_EXISTS if it exists.
   */
  async createPlanAt(
    plan: string,
    options: PlanOptions,
    writeOptions: WriteOptions,
    origin: unknown,
  ): Promise<string> {
    assertValidPath('plan', plan);
    const settings = resolvePlanSettings(options);
    const loading = tracingLoading();
    if (loading !== undefined) await loading;
    const traced = startPlanSpan({ parent: parentOf(plan), name: settings.name });
    traced?.span.set(ATTR_PLAN_PATH, plan);
    try {
      await this.zk.ensurePath(parentOf(plan));
      await this.zk.create(
        plan,
        encodeValue({ ...settings, origin, ...traceField(traced) }, 'plan settings'),
        'persistent',
        writeOptions,
      );
      await this.createPlanChildren(plan, settings.history, writeOptions);
      traced?.span.succeeded();
      return plan;
    } catch (error) {
      traced?.span.failed(error);
      throw error;
    }
  }

  private async createPlanChildren(
    plan: string,
    history: boolean,
    options: WriteOptions,
  ): Promise<void> {
    await Promise.all([
      this.zk.create(childPath(plan, RUNNABLE_INDEX), null, 'persistent', options),
      history ? this.zk.create(childPath(plan, HISTORY), null, 'persistent', options) : undefined,
    ]);
  }

  /**
   * The spec's `add-task`: a sequential `task-` node holding the task's definition, one
   * dependency per arg task (in order: their results become the function's arguments in that
   * order), then `ready`. On failure nothing half-built is left that a worker could run.
   */
  async addTask(
    plan: string,
    spec: TaskSpec,
    argTasks: readonly string[] = [],
    options: AddTaskOptions = {},
  ): Promise<string> {
    this.assertArgTasks(plan, argTasks);
    const [task] = await this.addTasks(plan, [{ task: spec, args: argTasks, options }]);
    return task as string;
  }

  /**
   * Adds many tasks at pipelined speed: every phase (task nodes, dep-*, prov-*, ready, runnable
   * index) is sent at once on the session, which keeps ZooKeeper's order. An arg is the path of an
   * existing task of the plan, or the index of an earlier task of this batch. Returns the paths, in order.
   */
  async addTasks(
    plan: string,
    tasks: readonly TaskToAdd[],
    context: BatchContext = {},
  ): Promise<string[]> {
    assertValidPath('plan', plan);
    if (!Array.isArray(tasks))
      throw new InvalidArgumentError('tasks', 'expected an array of { task, args?, options? }');
    const { claimSession, presets } = context;
    // A caller that holds a claim on its session (a schedule's tick) passes that session: nothing lands once it has expired.
    const session = claimSession ?? this.zk.session;
    // Each task names its builder and batch: whoever finds it unfinished can tell whose it is and whether that one still lives.
    // Unique across the ensemble: session ids are, and this session numbers its own batches.
    const stamp: BuilderStamp = {
      builder: session.id,
      batch: context.spawn?.batch ?? `${session.id}-${++this.batchSerial}`,
    };
    const prepared = tasks.map((entry, index) =>
      this.prepare(plan, entry, index, stamp, presets?.get(index)?.result !== undefined),
    );
    // Keys of a spec's tasks are unique by the spec and recorded in its spec record; others are claimed one by one.
    const keyed =
      context.specKeys === true
        ? []
        : prepared.flatMap(({ key }, index) => (key === undefined ? [] : [{ key, index }]));
    assertDistinctKeys(plan, keyed);
    const external = [
      ...new Set(
        prepared.flatMap(({ args }) =>
          args.filter((arg): arg is string => typeof arg === 'string'),
        ),
      ),
    ];
    await Promise.all([
      this.refuseOverfullListing(plan, prepared.length),
      ...external.map((arg) => this.assertArgTaskExists(arg)),
      keyed.length > 0
        ? this.keyClaims.assertNotInSpec(
            plan,
            keyed.map(({ key }) => key),
          )
        : undefined,
    ]);
    this.building.add(stamp.batch);
    try {
      return await this.writeBatch(plan, prepared, keyed, stamp, session, context);
    } finally {
      this.building.delete(stamp.batch);
    }
  }

  /**
   * Refuses a batch that would take the plan's child listing past jute.maxbuffer (read with the
   * batch's other checks, so it costs no round trip of its own). A check, not a guarantee: batches
   * added at once by several processes each count the plan before the others land, so together they
   * can pass the limit by their sizes.
   */
  private async refuseOverfullListing(plan: string, adding: number): Promise<void> {
    const stat = await this.zk.exists(plan);
    if (stat === undefined) throw new PlanNotFoundError(plan);
    assertListingFits(plan, stat.numChildren, adding, this.juteMaxBufferBytes);
  }

  /**
   * Checks a batch as addTasks does before it writes anything (shapes, options, function names,
   * args), and names what each task runs: a function's name, or `inline`.
   */
  checkTasks(plan: string, tasks: readonly TaskToAdd[]): string[] {
    assertValidPath('plan', plan);
    const stamp: BuilderStamp = { builder: 'check', batch: 'check' };
    return tasks.map((entry, index) => {
      this.prepare(plan, entry, index, stamp);
      return entry.task.kind === 'inline' ? 'inline' : entry.task.fn;
    });
  }

  /** addTasks once every check passed: the writes, in phases. */
  private async writeBatch(
    plan: string,
    prepared: readonly PreparedTask[],
    keyed: readonly { key: string; index: number }[],
    stamp: BuilderStamp,
    session: ZkSession,
    { claimSession, presets, spawn }: BatchContext,
  ): Promise<string[]> {
    // Every write of the batch is fenced by this session: once it has expired (and its builder node
    // with it, so that others may delete its unfinished tasks), nothing of the batch lands any more.
    const fence = { fence: session };
    const prioritized = prepared.some(({ prioritized }) => prioritized);
    // Before any task of the batch exists: a worker that sees one of them also sees the flag (session order).
    const [, planReady] = await Promise.all([
      this.ensureBuilder(plan, session),
      this.store.reads.isReady(plan),
      prioritized ? this.flagTaskPriorities(plan) : undefined,
    ]);

    // Sequential creates are not resent after a connection loss, so one may have happened without
    // our knowing its name: on any failure the batch's unfinished tasks are found by their stamp.
    const created = await Promise.allSettled(
      prepared.map(({ definition }) =>
        this.zk.create(childPath(plan, TASK_PREFIX), definition, 'persistent-sequential', fence),
      ),
    );
    const paths = created.flatMap((outcome) =>
      outcome.status === 'fulfilled' ? [outcome.value] : [],
    );
    const failure = created.find(
      (outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected',
    );
    if (failure !== undefined) {
      await this.removeBatch(plan, stamp.batch, paths);
      if (isZkError(failure.reason, 'NO_NODE')) throw new PlanNotFoundError(plan);
      throw failure.reason;
    }
    const links = prepared.flatMap(({ args, takesFailures }, index) =>
      args.map((arg) => ({
        dependent: paths[index] as string,
        producer: typeof arg === 'string' ? arg : (paths[arg] as string),
        takesFailures,
      })),
    );
    // A continuation whose input failed for good before it was linked could never run, and the
    // walk of that failure (src/trigger) ran before its link existed: refused instead (the
    // hand-over's try fails for good, and its own failure is walked).
    const continuation = spawn?.continues !== undefined;
    // A batch of several tasks is committed by one write, its marker, once every link is in place:
    // before it a failure deletes the batch, after it the batch is completed (by us, or by workers
    // if we die), so the plan never holds part of a batch. One task is committed by its `ready`.
    const marker =
      paths.length > 1 || spawn !== undefined
        ? childPath(plan, batchMarkerName(stamp.batch))
        : undefined;
    const markerValue =
      spawn === undefined ? null : encodeValue({ tasks: paths }, 'spawn batch marker', plan);
    let satisfied: boolean[];
    try {
      // Keys before the commit (the marker, or the one task's `ready`): a task never runs under a key it does not hold.
      const claiming = {
        session,
        fence,
        building: (batch: string) => this.building.has(batch),
        removeBatch: (own: TaskStamp) => this.removeBatch(plan, own.batch, []),
      };
      // Settled one and all before a failure is handled: the clean-up must see every claim this batch made.
      const claims = await Promise.allSettled(
        keyed.map(({ key, index }) =>
          this.keyClaims.claim(plan, key, paths[index] as string, claiming),
        ),
      );
      const refused = claims.find(
        (outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected',
      );
      if (refused !== undefined) throw refused.reason;
      // An imported task's stored result or failure, in place before anything makes it ready.
      await Promise.all(
        [...(presets ?? [])].map(([index, preset]) =>
          this.writePreset(paths[index] as string, preset, fence),
        ),
      );
      // dep-* of one task are created in arg order (the session keeps order), so arg serials follow argTasks.
      const deps = await Promise.all(
        links.map(({ dependent }) =>
          this.zk.create(childPath(dependent, DEP_PREFIX), null, 'persistent-sequential', fence),
        ),
      );
      const batch = new Set(paths);
      satisfied = await Promise.all(
        links.map(({ producer, takesFailures }, index) =>
          this.linkProducer(producer, deps[index] as string, batch, fence, {
            takesFailures,
            continuation,
          }),
        ),
      );
      if (spawn?.continues !== undefined)
        await this.linkContinuation(paths[0] as string, spawn.continues, fence);
      if (marker !== undefined)
        await this.zk.createIfAbsent(marker, markerValue, 'persistent', fence);
    } catch (error) {
      // Not ready yet, so no worker runs them meanwhile.
      await this.removeBatch(plan, stamp.batch, paths);
      throw error;
    }
    // Committed. A spawn records its tasks before any can run: a failure here leaves the marker
    // (which holds them too) and unready tasks, which the spawning task's next run completes.
    await spawn?.committed(paths);
    const unmet = new Set<string>();
    links.forEach(({ dependent }, index) => {
      if (!satisfied[index]) unmet.add(dependent);
    });
    try {
      await Promise.all(paths.map((task) => this.store.makeReady(task, fence)));
    } catch (error) {
      if (marker === undefined) {
        await this.removeBatch(plan, stamp.batch, paths);
        throw error;
      }
      // Committed: finish it on whatever session this client has now (workers do the same if it has none);
      // a caller's own fence stays: whoever takes over its claim rebuilds the unready plan's tasks.
      await Promise.all(
        paths.map((task) => this.store.makeReady(task, claimSession === undefined ? {} : fence)),
      );
    }
    const failedOnArrival = new Set(
      [...(presets ?? [])]
        .filter(([, preset]) => preset.failure !== undefined)
        .map(([index]) => paths[index]),
    );
    const runnable = paths.filter((task) => !unmet.has(task) && !failedOnArrival.has(task));
    await Promise.all(
      runnable.map((task) =>
        this.store.markRunnable(task, claimSession === undefined ? {} : fence),
      ),
    );
    // In a ready plan a producer may have finished before its dependent's `ready` existed: it then
    // could not index the dependent (not ready), so look at each such dependent once more.
    if (planReady) await Promise.all([...unmet].map((task) => this.indexIfRunnable(task, {})));
    if (marker !== undefined) await this.zk.deleteIfPresent(marker).catch(() => undefined); // a marker left behind harms nothing
    return paths;
  }

  /**
   * Creates the plan's ephemeral `builder-<session>` node once per session: its presence tells
   * workers that tasks this session has not made ready yet are still being written.
   */
  private async ensureBuilder(plan: string, session: ZkSession): Promise<void> {
    const key = `${session.generation}\u0000${plan}`;
    if (this.builders.has(key)) return;
    try {
      await this.zk.createIfAbsent(
        childPath(plan, builderNodeName(session.id)),
        null,
        'ephemeral',
        { fence: session },
      );
    } catch (error) {
      if (isZkError(error, 'NO_NODE')) throw new PlanNotFoundError(plan);
      throw error;
    }
    if (this.builders.size >= BUILDER_CACHE_SIZE) this.builders.clear(); // only costs a createIfAbsent again
    this.builders.add(key);
  }

  /**
   * Records in the plan's settings that some of its tasks have a priority of their own, so that
   * workers read each task's before picking (plans without one never pay for that read). A
   * versioned read-modify-write of the plan node, safe to repeat and against concurrent writers;
   * the change of the node's data tells every worker (their data watch on the plan).
   */
  private async flagTaskPriorities(plan: string): Promise<void> {
    if (this.prioritizedPlans.has(plan)) return;
    for (;;) {
      const node = await this.zk.tryGetData(plan);
      if (node === undefined) throw new PlanNotFoundError(plan);
      let stored: unknown;
      try {
        stored = node.data?.length ? decodeValue(plan, node.data) : undefined;
      } catch {
        stored = undefined; // another tool's plan value: zk-plan's settings replace it
      }
      const settings = planSettingsFrom(stored);
      if (settings.taskPriorities) break;
      try {
        // Fields zk-plan does not read (a schedule tick's origin, another tool's) are kept.
        const kept = typeof stored === 'object' && stored !== null ? stored : {};
        await this.zk.setData(
          plan,
          encodeValue({ ...kept, ...settings, taskPriorities: true }, 'plan settings', plan),
          node.stat.version,
          {
            incarnation: node.stat.czxid,
          },
        );
        break;
      } catch (error) {
        if (isZkError(error, 'NO_NODE', 'NODE_REPLACED')) throw new PlanNotFoundError(plan); // deleted (and perhaps made again) meanwhile
        if (!isZkError(error, 'BAD_VERSION')) throw error; // changed meanwhile (a touch): read it again
      }
    }
    if (this.prioritizedPlans.size >= BUILDER_CACHE_SIZE) this.prioritizedPlans.clear(); // only costs a read again
    this.prioritizedPlans.add(plan);
  }

  /**
   * Deletes the tasks of a batch that never committed and never will, as its own writer would
   * have: the spawn call of a task's earlier run, whose claim was given back or whose session
   * expired before the commit (TaskSpawner, when the task's next run takes the call over).
   */
  async abandonBatch(plan: string, batch: string): Promise<void> {
    await this.removeBatch(plan, batch, []);
  }

  /**
   * Deletes what a failed batch left: the tasks it knows, and any other unfinished task carrying its
   * stamp (a create whose reply was lost). Best effort: when this cannot finish (the session is
   * gone), the builder node is gone too, and workers delete the rest.
   */
  private async removeBatch(plan: string, batch: string, known: readonly string[]): Promise<void> {
    try {
      await this.zk.deleteIfPresent(childPath(plan, batchMarkerName(batch))); // from now on workers delete, never complete, the batch
      const listing = await this.zk.tryGetChildren(plan);
      const tasks = (listing?.children ?? [])
        .filter((name) => hasSequentialName(name, TASK_PREFIX))
        .map((name) => childPath(plan, name));
      const stamps = await Promise.all(tasks.map((task) => this.store.reads.readStamp(task)));
      const ours = tasks.filter(
        (task, index) => known.includes(task) || stamps[index]?.batch === batch,
      );
      const keys = new Map(
        tasks.flatMap((task, index) =>
          stamps[index]?.key === undefined ? [] : [[task, stamps[index]?.key as string] as const],
        ),
      );
      const claimed = listing?.children.includes(TASK_KEYS) === true;
      // Each task's key first, as settleOrphan does: a claim never outlives its unfinished task.
      await Promise.all(
        ours.map(async (task) => {
          const key = keys.get(task);
          if (claimed && key !== undefined) await this.store.releaseKeyClaim(plan, key, task);
          await this.store.deleteUncommitted(task);
        }),
      );
    } catch {
      // see above: the workers finish the job
    }
  }

  private async writePreset(task: string, preset: TaskPreset, fence: WriteOptions): Promise<void> {
    if (preset.result !== undefined)
      await writeValue(this.zk, childPath(task, RESULT), preset.result, {
        ...fence,
        maxBytes: Number.MAX_SAFE_INTEGER,
      });
    if (preset.failure !== undefined)
      await this.zk.createIfAbsent(childPath(task, FAILED), preset.failure, 'persistent', fence);
  }

  /** Indexes a dependent whose inputs all arrived while it was being added. */
  private async indexIfRunnable(task: string, options: WriteOptions): Promise<void> {
    const listing = await this.store.reads.inspectTask(task);
    if (
      listing !== undefined &&
      classifyTask(listing.children, listing.childVersion) === 'runnable'
    )
      await this.store.markRunnable(task, options);
  }

  /** The spec's `mark-as-ready`: creates `ready` under a plan (or task), then touches the plan so watching workers look at once; idempotent. */
  async markAsReady(path: string, options: WriteOptions = {}): Promise<void> {
    assertValidPath('plan', path);
    try {
      await this.zk.createIfAbsent(childPath(path, READY), null, 'persistent', options);
    } catch (error) {
      if (isZkError(error, 'NO_NODE')) throw new PlanNotFoundError(path);
      throw error;
    }
    await this.store.touchPlan(path, options);
  }

  /**
   * The spec's `add-dependency`, after `dep` was created under the dependent: `prov-M` under the
   * producer holding the dep's path. A producer of this batch is not ready yet, so it will see the
   * prov. Another producer may be finishing at this very moment: it lists prov-* only after removing
   * its `ready`, so if `ready` is still there after our prov-M exists, the producer will see it; if
   * not, we hand its result over ourselves. Resolves true when the dep was satisfied here.
   */
  private async linkProducer(
    producer: string,
    dep: string,
    batch: ReadonlySet<string>,
    fence: WriteOptions,
    { takesFailures, continuation }: { takesFailures: boolean; continuation: boolean },
  ): Promise<boolean> {
    let prov: string;
    try {
      prov = await this.zk.create(
        childPath(producer, PROV_PREFIX),
        encodeValue(dep, 'dependency link'),
        'persistent-sequential',
        fence,
      );
    } catch (error) {
      if (!isZkError(error, 'NO_NODE')) throw error;
      await this.takeKeptResult(producer, dep, fence); // the producer completed and is gone
      return true;
    }
    // A producer of the batch is an imported one when it is failed already (its preset).
    if (batch.has(producer) || (await this.store.reads.isReady(producer))) {
      if (!takesFailures && (!continuation || batch.has(producer))) return false;
      const failed = await this.finalFailureOf(producer);
      if (failed === undefined) return false;
      if (!takesFailures) throw new InputFailedError(parentOf(dep), undefined, failed);
      await this.handOnFinalFailure(prov, dep, failed, fence);
      return true;
    }
    const finishing = await this.store.reads
      .readStoredValue(childPath(producer, RESULT))
      .catch((error: unknown) => {
        if (error instanceof IncompleteValueError) return undefined; // being deleted: fall back to the kept result
        throw error;
      });
    if (finishing !== undefined) {
      decodeValue(childPath(producer, RESULT), finishing);
      await this.store.propagate(prov, finishing, fence);
      return true;
    }
    await this.zk.deleteIfPresent(prov, -1, fence);
    await this.takeKeptResult(producer, dep, fence);
    return true;
  }

  /**
   * A dependent whose rule takes failures, linked to a producer that has failed for good, or whose
   * final try is recorded: the worker that fails it walks its links after it recorded that try
   * (src/trigger/failure-hand-on.ts), and may have walked before our link existed, so the failure is
   * handed on here. A producer whose final try comes later walks after it and finds our link.
   * Resolves true when the dep was satisfied here.
   */
  /** A producer's failure for good, as its dependents are told of it: when it is marked failed, or its final try is recorded. */
  private async finalFailureOf(producer: string): Promise<InputFailure | undefined> {
    const listing = await this.store.reads.inspectTask(producer);
    if (listing === undefined) return undefined;
    let failure: TaskFailure | undefined;
    if (listing.children.includes(FAILED)) failure = await this.store.reads.readFailure(producer);
    else if (listing.children.includes(ATTEMPTS)) {
      const attempts = await this.store.reads.readAttempts(producer);
      if (attempts !== undefined && !attempts.lastFailure.retryable) failure = attempts.lastFailure;
    }
    if (failure === undefined) return undefined;
    const key = (await this.store.reads.readDefinition(producer))?.key;
    return inputFailureOf(producer, key, failure);
  }

  /**
   * Hands a producer's failure for good to a dependent whose rule takes failures, linked to it just
   * now: the worker that fails a task walks its links after it recorded the final try
   * (src/trigger/failure-hand-on.ts), and may have walked before this link existed; an imported
   * producer was failed in the batch itself. A producer whose final try comes later walks after it
   * and finds the link. The link is removed as the walk removes it.
   */
  private async handOnFinalFailure(
    prov: string,
    dep: string,
    failure: InputFailure,
    fence: WriteOptions,
  ): Promise<void> {
    await this.store.giveInput(dep, encodeValue(failedValue(failure), 'input failure'), fence);
    await this.store.unlink(prov, fence); // a retried producer's result must not reach it
  }

  /**
   * Links a continuation to the input of the task it continues: the link first, then the input,
   * one after the other, so that the input never exists without the link through which the
   * clean-up of an uncommitted batch finds and deletes it (TaskStore.deleteUncommitted); were it
   * left, the continued task would wait for ever.
   */
  private async linkContinuation(
    continuation: string,
    dep: string,
    fence: WriteOptions,
  ): Promise<void> {
    await this.zk.createIfAbsent(
      childPath(continuation, CONTINUATION_LINK),
      encodeValue(dep, 'dependency link'),
      'persistent',
      fence,
    );
    await this.zk.createIfAbsent(dep, null, 'persistent', fence);
  }

  /** Satisfies `dep` from the producer's kept result, or fails saying why the producer cannot serve as an input. */
  private async takeKeptResult(producer: string, dep: string, fence: WriteOptions): Promise<void> {
    const kept = await this.store.reads.readStoredValue(keptResultPathFor(producer));
    if (kept === undefined) {
      throw new ArgTaskNotFoundError(
        producer,
        'has already completed and its result was not kept (add it with { keepResult: true } to depend on it later), or another client has not finished adding it',
      );
    }
    decodeValue(keptResultPathFor(producer), kept);
    await this.store.giveInput(dep, kept, fence);
  }

  /**
   * Lets the plan's failed tasks be tried again from scratch (their attempts reset), and so their
   * dependents after them, like "rerun from the failed node". Returns the tasks reset.
   *
   * The plan's `failed` marker is removed last, and only if no task failed for good meanwhile (a
   * new failure rewrites the marker, whose version then no longer matches). A crash part-way leaves
   * a marker without a failed task: the workers' next full scan removes it.
   */
  async retryFailed(plan: string): Promise<string[]> {
    assertValidPath('plan', plan);
    const tasks = await this.store.reads.listTasks(plan);
    if (tasks === undefined) throw new PlanNotFoundError(plan);
    const marker = await this.store.reads.planFailedMarker(plan);
    const listings = await Promise.all(
      tasks.map(async (task) => ({ task, listing: await this.store.reads.inspectTask(task) })),
    );
    const failed = listings
      .filter(({ listing }) => listing?.children.includes(FAILED))
      .map(({ task }) => task);
    // A failed sub-plan task's child first: its failed tasks run again, and the task, retried
    // after, waits for the child again instead of failing at once on its old failure.
    const failedSet = new Set(failed);
    const children = (await listSubPlans(this.zk, plan)).filter(({ task }) => failedSet.has(task));
    await Promise.all(children.map(({ child }) => this.retryChild(child)));
    // attempts (and a wait's record, whose checks start again) first: a crash in between leaves the
    // task failed, and a second retryFailed finishes the job. Each delete names the node read: sent
    // again after a lost reply, it never takes a failure (or a count of tries) that a run after the
    // retry wrote since.
    await Promise.all(
      failed.map(async (task) => {
        await this.deleteAsRead(childPath(task, WAITING));
        await this.deleteAsRead(childPath(task, ATTEMPTS));
        await this.deleteAsRead(childPath(task, FAILED));
        await this.indexIfRunnable(task, {});
      }),
    );
    // Touches the plan either way: workers that stopped it (failFast) look at it again.
    if (marker === undefined || !(await this.store.clearPlanFailed(plan, marker)))
      await this.store.touchPlan(plan);
    return failed;
  }

  /** retryFailed of a sub-plan task's child; a child that is gone has nothing to retry. */
  private async retryChild(child: string): Promise<void> {
    try {
      await this.retryFailed(child);
    } catch (error) {
      if (!(error instanceof PlanNotFoundError)) throw error;
    }
  }

  /** Deletes the node as read now, if present: neither a change since nor a node made again since is taken, by a resend either. */
  private async deleteAsRead(path: string): Promise<void> {
    const stat = await this.zk.exists(path);
    if (stat === undefined) return;
    try {
      await this.zk.delete(path, stat.version, { incarnation: stat.czxid });
    } catch (error) {
      if (!isZkError(error, 'NO_NODE', 'BAD_VERSION')) throw error; // gone, or written again since: a new failure stays
    }
  }

  private prepare(
    plan: string,
    entry: TaskToAdd,
    index: number,
    stamp: BuilderStamp,
    resultPreset = false,
  ): PreparedTask {
    if (typeof entry !== 'object' || entry === null)
      throw new InvalidArgumentError(`tasks[${index}]`, 'expected { task, args?, options? }');
    assertKnownKeys(`addTasks (tasks[${index}])`, entry, TASK_TO_ADD_KEYS);
    assertTaskSpec(entry.task);
    const args = entry.args ?? [];
    if (!Array.isArray(args))
      throw new InvalidArgumentError(
        `tasks[${index}].args`,
        'expected an array of task paths or earlier batch indices',
      );
    args.forEach((arg: unknown, position) => {
      if (typeof arg === 'number') {
        if (!Number.isInteger(arg) || arg < 0 || arg >= index) {
          throw new InvalidArgumentError(
            `tasks[${index}].args[${position}]`,
            `a batch index must point at an earlier task of the batch (0…${index - 1}), got ${arg}`,
          );
        }
        return;
      }
      assertSequentialPath(`tasks[${index}].args[${position}]`, arg, TASK_PREFIX);
      if (parentOf(arg) !== plan) throw new ForeignArgTaskError(arg, plan);
    });
    const spec = entry.task; // a task whose result is preset (an import's done task) never calls its function: it need not be registered
    if (spec.kind === 'call' && spec.fn === SHELL_FUNCTION) {
      const problem = shellParamsProblem(spec.params);
      if (problem !== undefined)
        throw new ShellParamsError(`a task added to plan ${plan} (tasks[${index}])`, problem, plan);
    } else if (spec.kind === 'call' && spec.fn === WAIT_FOR_PLAN_FUNCTION) {
      const where = `a dependent task added to plan ${plan} (tasks[${index}])`;
      const target = checkTarget(spec.params[0], where);
      if (target.kind === 'plan' && target.plan === plan)
        throw new InvalidArgumentError(
          'plan',
          `${where} waits for its own plan, which never completes before it`,
          plan,
        );
    } else if (spec.kind === 'call' && spec.fn === SUB_PLAN_FUNCTION) {
      const where = `a sub-plan task added to plan ${plan} (tasks[${index}])`;
      const checked = checkSubPlan(spec.params[0], where);
      // An import's done task keeps its result and takes no input: its inputs are not counted.
      if (!resultPreset && checked.inputs.length !== args.length)
        throw new InvalidArgumentError(
          'inputs',
          `${where} has ${args.length} input(s) and names ${checked.inputs.length} in inputs: name each input once, in order`,
          plan,
        );
    } else if (
      spec.kind === 'call' &&
      !resultPreset &&
      spec.fn !== COLLECT_FUNCTION &&
      spec.fn !== WAIT_FOR_PLAN_FUNCTION &&
      this.functions.size > 0 &&
      !this.functions.has(spec.fn)
    ) {
      throw new UnknownFunctionError(spec.fn, undefined, this.functions.names());
    }
    const settings = taskSettings(entry.options ?? {});
    // The functions a map and its reduce call are checked as the task's own is.
    for (const step of [settings.map, settings.reduce])
      if (step !== undefined && this.functions.size > 0 && !this.functions.has(step.fn))
        throw new UnknownFunctionError(step.fn, undefined, this.functions.names());
    const definition = encodeValue(
      { ...toDefinition(spec, settings), ...stamp },
      `The task definition for plan ${plan}`,
      plan,
    );
    return {
      definition,
      args,
      key: settings.key,
      prioritized: settings.priority !== undefined,
      takesFailures: takesOutcomes(settings.trigger),
    };
  }

  private assertArgTasks(plan: string, argTasks: readonly string[]): void {
    if (!Array.isArray(argTasks))
      throw new InvalidArgumentError(
        'argTasks',
        'expected an array of task paths returned by addTask',
      );
    argTasks.forEach((arg: unknown, index) => {
      assertSequentialPath(`argTasks[${index}]`, arg, TASK_PREFIX);
      if (parentOf(arg) !== plan) throw new ForeignArgTaskError(arg, plan);
    });
  }

  private async assertArgTaskExists(arg: string): Promise<void> {
    if (await this.zk.exists(arg)) return;
    if (await this.zk.exists(keptResultPathFor(arg))) return;
    throw new ArgTaskNotFoundError(
      arg,
      'does not exist: pass paths returned by addTask for this plan (a task that already completed can be an input only if it was added with { keepResult: true })',
    );
  }
}

/** Refuses a batch that gives one key to two of its tasks (before anything is written). */
function assertDistinctKeys(plan: string, keyed: readonly { key: string; index: number }[]): void {
  const seen = new Set<string>();
  for (const { key } of keyed) {
    if (seen.has(key)) throw new DuplicateTaskKeyError(plan, key);
    seen.add(key);
  }
}
