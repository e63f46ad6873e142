import { TaskLogReader, type FollowLogOptions, type FollowedLogLine, type TaskLogQuery } from '../logs/task-log-reader.js';
import type { TaskLogAttempt } from '../logs/attempt-log-record.js';
import { EventEmitter } from 'node:events';
import { hostname } from 'node:os';
import { rootContainer } from '../di/container.js';
import {
  resolveConnectOptions,
  resolveMaxResultBytes,
  resolvePoolSize,
  resolvePlanEventOptions,
  resolveWaitOptions,
  resolveWorkerOptions,
  type ConnectOptions,
  type ResolvedWorkerOptions,
  type WaitOptions,
  type WorkerOptions,
  type WorkerPoolOptions,
  type PlanEventOptions,
  type SchedulerOptions,
} from '../config/options.js';
import { IllegalStateError, InvalidArgumentError } from '../errors/usage-errors.js';
import { FunctionRegistry } from '../exec/function-registry.js';
import type { TaskSpec } from '../exec/task-spec.js';
import { TaskStore } from '../store/task-store.js';
import type { ZkPlanEvents } from '../worker/worker-events.js';
import { runWorkerLoop, workerLoopRuntime, type WorkerLoopRuntime } from '../worker/worker-loop.js';
import { WorkerPool } from '../worker/worker-pool.js';
import { WakeUp } from '../worker/wake-up.js';
import { Dispatcher } from '../worker/dispatcher.js';
import { assertValidPath } from '../zk/layout.js';
import { ZkClient } from '../zk/zk-client.js';
import type { Zk } from '../zk/zk.js';
import { PlanReader } from './plan-reader.js';
import { PlanControl, type CancelOptions, type PauseOptions, type PauseOutcome } from '../control/plan-control.js';
import { PlanCancelledError } from '../errors/plan-errors.js';
import { listWorkers } from '../registry/worker-registry.js';
import { ConcurrencyLimits } from '../limits/concurrency-limits.js';
import { Explainer } from '../explain/explainer.js';
import type { PlanSpec } from '../spec/plan-spec.js';
import { buildCheckedSpec, checkSpecForSubmit, type SubmitOptions, type SubmittedPlan } from '../spec/submit-plan.js';
import { subscribePlanEvents, type PlanEventListener, type PlanEventWatcher } from '../alerts/plan-event-watcher.js';
import type { Explanation, PlanExplanation } from '../explain/explain-task.js';
import { assertConcurrencyKey, assertLimit, type SlotRecord } from '../limits/limit-record.js';
import type { WorkerInfo } from '../registry/worker-info.js';
import { PlanWriter, type AddTaskOptions, type TaskToAdd } from './plan-writer.js';
import type { PlanStatus } from './plan-status.js';
import { PlanDescriber } from './plan-describer.js';
import { CancelHistory } from './cancel-history.js';
import type { PlanSummary, PlanView } from './plan-view.js';
import type { PlanOptions } from '../config/plan-options.js';
import type { ZkPlanSettings } from './zk-plan-settings.js';
import { Scheduling } from '../schedule/scheduling.js';
import { JobWiring, type Jobs, type JobWorkerHandle, type JobWorkerOptions } from '../jobs/job-wiring.js';
import { PlanSnapshots, type ImportedPlan, type PlanSnapshot, type RerunOptions } from '../snapshot/plan-snapshots.js';
import { footprintOf, type ZkPlanFootprint } from './footprint.js';
import type { Schedules } from '../schedule/schedules.js';

/** A ZkPlan's lifecycle: `open` until `close()` is called, `closing` while its pools drain, then `closed` (every call fails with IllegalStateError). */
export type ZkPlanState = 'open' | 'closing' | 'closed';
export type { ZkPlanFootprint } from './footprint.js';

/**
 * The zk-plan API on one ZooKeeper session: build plans (addTask, submitPlan, schedules), run
 * workers and schedulers, follow and steer plans. A complete program: examples/quick-start.ts.
 */
export class ZkPlan<Client extends Zk = ZkClient> extends EventEmitter<ZkPlanEvents> {
  private currentState: ZkPlanState = 'open';
  private readonly store: TaskStore;
  private readonly writer: PlanWriter;
  private readonly reader: PlanReader;
  private readonly logReader: TaskLogReader;
  private readonly describer: PlanDescriber;
  private readonly control: PlanControl;
  private readonly limits: ConcurrencyLimits;
  private readonly explainer: Explainer;
  private readonly eventWatchers = new Set<PlanEventWatcher>();
  private readonly scheduling: Scheduling;
  private readonly jobWiring: JobWiring;
  private readonly snapshots: PlanSnapshots;
  private readonly wakeUp = new WakeUp();
  private readonly dispatcher: Dispatcher;
  private readonly pools = new Set<WorkerPool>();
  private readonly workerIdPrefix = `${hostname()}:${process.pid}`;

  /**
   * A ZkPlan on a client that is already connected: for the in-memory ZooKeeper of
   * `zk-plan/testing` (`new ZkPlan(memory.connect(), functions, { container })`) or a client
   * shared with other code. `ZkPlan.connect` is the usual way in.
   */
  constructor(
    /** The ZooKeeper client of this ZkPlan's session (a ZkClient, or a MemoryZkClient in tests); shared by everything the ZkPlan starts. */
    readonly zk: Client,
    /** The functions this process's workers run, by name. */
    readonly functions: FunctionRegistry,
    private readonly settings: ZkPlanSettings,
  ) {
    super();
    this.store = new TaskStore(zk, resolveMaxResultBytes(settings.maxResultBytes));
    this.reader = new PlanReader(zk, this.store);
    this.logReader = new TaskLogReader(zk);
    this.writer = new PlanWriter(zk, this.store, functions, this.reader.keys);
    this.describer = new PlanDescriber(zk, this.store, this.reader);
    const cancelHistory = new CancelHistory(zk, this.store, this.describer);
    this.control = new PlanControl(
      zk,
      this.store,
      async (plan) => (await this.reader.planStatus(plan)).state,
      (plan, cancelledAt) => cancelHistory.record(plan, cancelledAt),
    );
    this.limits = new ConcurrencyLimits(zk);
    this.explainer = new Explainer(zk, this.store, this.describer, this.control, this.limits);
    this.dispatcher = new Dispatcher(zk, this.store, this.wakeUp);
    const { writer, reader, control, workerIdPrefix: identity } = this;
    this.scheduling = new Scheduling({ zk, writer, reader, control, functions, events: this, identity, wake: () => this.wakeUp.wake() });
    this.jobWiring = new JobWiring({ zk, functions, events: this });
    this.snapshots = new PlanSnapshots({ zk, writer, store: this.store, functions, listWorkers: (parent) => listWorkers(zk, parent) });
    // Without a listener, an 'error'-like event would be lost silently; worker errors are events, never crashes.
    this.setMaxListeners(0);
  }

  /** Connects to ZooKeeper and returns a ZkPlan on a new session. */
  static async connect(options: ConnectOptions): Promise<ZkPlan> {
    const resolved = resolveConnectOptions(options);
    const functions = options.functions ?? new FunctionRegistry();
    if (!(functions instanceof FunctionRegistry)) throw new InvalidArgumentError('functions', 'expected a FunctionRegistry');
    const zk = await ZkClient.connect(resolved);
    return new ZkPlan(zk, functions, {
      container: options.container ?? rootContainer.createChildContainer(),
      ...(options.maxResultBytes !== undefined ? { maxResultBytes: options.maxResultBytes } : {}),
    });
  }

  /** Where this ZkPlan is in its lifecycle (see ZkPlanState). */
  get state(): ZkPlanState {
    return this.currentState;
  }

  /** Creates a plan under `parent` (created if missing) with its retry and failure policy; returns the plan's path. */
  createPlan(parent: string, options: PlanOptions = {}): Promise<string> {
    this.assertOpen();
    return this.writer.createPlan(parent, options);
  }

  /** Adds a task to `plan` whose inputs are the results of `argTasks`, in that order; returns the task's path. */
  addTask(plan: string, task: TaskSpec, argTasks: readonly string[] = [], options: AddTaskOptions = {}): Promise<string> {
    this.assertOpen();
    return this.writer.addTask(plan, task, argTasks, options);
  }

  /**
   * Adds many tasks at pipelined speed (each phase sent at once on the session). An arg is the
   * path of an existing task of the plan, or the index of an earlier task of the batch. Returns the paths in order.
   */
  addTasks(plan: string, tasks: readonly TaskToAdd[]): Promise<string[]> {
    this.assertOpen();
    return this.writer.addTasks(plan, tasks);
  }

  /** Marks a plan ready: workers start taking its tasks. */
  async markAsReady(plan: string): Promise<void> {
    this.assertOpen();
    this.woken(await this.writer.markAsReady(plan));
  }

  /** True once the plan has no task left. */
  planCompleted(plan: string): Promise<boolean> {
    this.assertOpen();
    return this.reader.planCompleted(plan);
  }

  /** Where the plan stands: state, task counts, failed tasks with their errors, tasks blocked forever, tasks to be retried. */
  planStatus(plan: string): Promise<PlanStatus> {
    this.assertOpen();
    return this.reader.planStatus(plan);
  }

  /** Every task of the plan with its state, function, inputs, owner, attempts, failure, worker and times (ended ones from its history, kept unless `{ history: false }`). */
  describePlan(plan: string): Promise<PlanView> {
    this.assertOpen();
    return this.describer.describePlan(plan);
  }

  /** The plans under `parent`, oldest first, with their status. */
  listPlans(parent: string): Promise<PlanSummary[]> {
    this.assertOpen();
    return this.describer.listPlans(parent);
  }

  /** Removes a plan and everything below it; workers running its tasks find them gone and move on. */
  deletePlan(plan: string): Promise<void> {
    this.assertOpen();
    return this.describer.deletePlan(plan);
  }

  /**
   * Pauses the plan: no task of it starts anywhere until resumePlan; running tasks finish (or, with
   * `abortRunning`, have their signal aborted and are given back uncharged). Resolves once the
   * pause is in ZooKeeper, with the tasks held by workers at that moment (the only ones that may
   * still start). Safe to repeat; a paused plan is neither completed nor failed.
   */
  pausePlan(plan: string, options: PauseOptions = {}): Promise<PauseOutcome> {
    this.assertOpen();
    return this.control.pause(plan, options);
  }

  /** Lets a paused plan run again (a plan that is not paused is left alone); PlanCancelledError for a cancelled one. */
  async resumePlan(plan: string): Promise<void> {
    this.assertOpen();
    this.woken(await this.control.resume(plan));
  }

  /**
   * Cancels the plan for good: nothing of it starts any more, running tasks have their signal
   * aborted, its tasks are deleted; the plan stays, `cancelled` with the reason, until deletePlan
   * or retention removes it. waitForCompletion rejects with PlanCancelledError (PLAN_CANCELLED).
   */
  cancelPlan(plan: string, options: CancelOptions = {}): Promise<void> {
    this.assertOpen();
    return this.control.cancel(plan, options);
  }

  /** Lets the plan's failed tasks (and so their dependents) run again, attempts reset; returns the tasks reset. */
  async retryFailed(plan: string): Promise<string[]> {
    this.assertOpen();
    const control = await this.control.read(plan);
    if (control?.state === 'cancelled') throw new PlanCancelledError(plan, control.reason);
    return this.woken(await this.writer.retryFailed(plan));
  }

  /**
   * Resolves when the plan has no task left; rejects with PlanFailedError once it has failed, or
   * with WaitTimeoutError after `timeoutMs`. Watch-driven.
   */
  waitForCompletion(plan: string, options: WaitOptions = {}): Promise<void> {
    this.assertOpen();
    // Bad options reject (as every other check of this method does), they do not throw.
    return Promise.resolve(options)
      .then(resolveWaitOptions)
      .then(({ timeoutMs, signal }) => this.reader.waitForCompletion(plan, timeoutMs, signal));
  }

  /**
   * At most `limit` tasks added with `{ concurrencyKey: key }` run at once across every worker and
   * plan under `parent`; changeable while they run (a lower limit takes effect as running tasks
   * finish). A slot is held through an ephemeral node, so a crashed worker frees its slot when its
   * session expires.
   */
  async setConcurrencyLimit(parent: string, key: string, limit: number): Promise<void> {
    this.assertOpen();
    assertValidPath('parent', parent);
    assertConcurrencyKey('key', key);
    assertLimit('limit', limit);
    await this.limits.setLimit(parent, key, limit);
  }

  /** The limit of `key` under `parent` and the tasks holding its slots now; undefined when the key has no limit. */
  getConcurrencyLimit(parent: string, key: string): Promise<{ limit: number; holders: SlotRecord[] } | undefined> {
    this.assertOpen();
    assertValidPath('parent', parent);
    assertConcurrencyKey('key', key);
    return this.limits.readLimit(parent, key);
  }

  /** Every concurrency limit under `parent` (sorted by key) with the tasks holding its slots now. */
  listConcurrencyLimits(parent: string): Promise<{ key: string; limit: number; holders: SlotRecord[] }[]> {
    this.assertOpen();
    assertValidPath('parent', parent);
    return this.limits.listLimits(parent);
  }

  /**
   * Why a task is not running (or that it is, or is done): a stable code (PLAN_PAUSED,
   * WAITING_FOR_INPUTS, CONCURRENCY_LIMIT, NO_WORKER_FOR_FUNCTION, …), a sentence, and the data behind it.
   */
  explainTask(task: string): Promise<Explanation> {
    this.assertOpen();
    return this.explainer.explainTask(task);
  }

  /** Why a plan is not progressing: its state, and its unfinished tasks grouped by explanation code. */
  explainPlan(plan: string): Promise<PlanExplanation> {
    this.assertOpen();
    return this.explainer.explainPlan(plan);
  }

  /**
   * Calls `listener` when a task under `parent` fails for good, or a plan fails, is cancelled or
   * completes: once per event across the cluster, however many processes listen (at least once if
   * a listening process dies while delivering). A listener that throws is called again with
   * doubling pauses, `maxAttempts` times. Returns the subscription; `close()` ends it.
   */
  onPlanEvent(
    parent: string,
    listener: PlanEventListener,
    options: PlanEventOptions = {},
  ): {
    /** Ends the subscription; resolves once the work it had started (deliveries included) is done. */
    close(): Promise<void>;
  } {
    this.assertOpen();
    return subscribePlanEvents(this.zk, (plan) => this.reader.planStatus(plan), parent, listener, resolvePlanEventOptions(options), this.eventWatchers);
  }

  /**
   * Builds and readies a plan from a declarative spec (`{ tasks: { [key]: { fn, params?, inputs?, options? } }, options? }`),
   * `{ $param: name }` filled from `params`; checked in full first (PlanSpecError naming the task key). Returns each task's path by key.
   */
  async submitPlan(parent: string, spec: PlanSpec, options: SubmitOptions = {}): Promise<SubmittedPlan> {
    this.assertOpen();
    assertValidPath('parent', parent);
    const checked = await checkSpecForSubmit(spec, this.functions, await listWorkers(this.zk, parent), options);
    return this.woken(await buildCheckedSpec(this.writer, this.zk, checked, { spec, params: options.params ?? {} }, parent));
  }

  /** A self-contained, superjson-serialisable snapshot of the plan: spec (derived for a plan without one), params, each task's state, result or failure. */
  exportPlan(plan: string): Promise<PlanSnapshot> {
    this.assertOpen();
    return this.snapshots.exportPlan(plan);
  }

  /** Recreates a snapshot as a new plan under `parent` that goes on where it stood (done tasks are not run again); safe to repeat. */
  async importPlan(parent: string, snapshot: PlanSnapshot): Promise<ImportedPlan> {
    this.assertOpen();
    return this.woken(await this.snapshots.importPlan(parent, snapshot));
  }

  /** A new run of the plan's spec from `from` (a task key, or `'failed'`): it and its downstream run again, the rest reuse their results. */
  async rerunPlan(plan: string, options: RerunOptions): Promise<ImportedPlan> {
    this.assertOpen();
    return this.woken(await this.snapshots.rerunPlan(plan, options));
  }

  /** The schedules under `parent`: put (cron, time zone, spec, overlap and misfire policies), pause, resume, trigger, remove, list. */
  schedules(parent: string): Schedules {
    this.assertOpen();
    return this.scheduling.schedules(parent);
  }

  /** Fires the schedules under `parent` from this process until `stop()` (or close()); each tick makes one plan across processes. */
  startScheduler(
    parent: string,
    options: SchedulerOptions = {},
  ): {
    /** Stops firing; resolves once the scheduler's current pass (a tick being fired included) is done. */
    stop(): Promise<void>;
  } {
    this.assertOpen();
    return this.scheduling.start(parent, options);
  }

  /** The jobs under `parent`: define (function, work pool, mode, strategy), setWorkPool, disable, enable, trigger, remove, list, assignment. */
  jobs(parent: string): Jobs {
    this.assertOpen();
    return this.jobWiring.jobs(parent);
  }

  /** Runs this process's job functions (`registerJob`) on the jobs under `parent` until `stop()` (or close()); see src/jobs/. */
  startJobWorker(parent: string, options: JobWorkerOptions = {}): JobWorkerHandle {
    this.assertOpen();
    return this.jobWiring.start(parent, options);
  }

  /** The worker pools following `parent` right now, from the live registry (each pool's node lives as long as its session). */
  listWorkers(parent: string): Promise<WorkerInfo[]> {
    this.assertOpen();
    return listWorkers(this.zk, parent);
  }

  /**
   * The path of the plan's task known by `key` (its spec's key, or addTask's `{ key }`), also once it
   * has finished; TaskKeyNotFoundError (TASK_KEY_NOT_FOUND) when no task of the plan has the key.
   */
  taskOfKey(plan: string, key: string): Promise<string> {
    this.assertOpen();
    return this.reader.taskOfKey(plan, key);
  }

  /** The result of a task added with `{ keepResult: true }`, after it completed. */
  getResult(task: string): Promise<unknown> {
    this.assertOpen();
    return this.reader.getResult(task);
  }

  /**
   * What `task` logged (`ctx.log`, captured `console.*`): each try's last lines as kept in
   * ZooKeeper, oldest try first, from any process, while the task runs and after it is done, until
   * its plan is deleted. `attempt` picks one attempt's tries. A try that logged nothing has no record.
   */
  taskLog(task: string, query: TaskLogQuery = {}): Promise<TaskLogAttempt[]> {
    this.assertOpen();
    return this.logReader.taskLog(task, query);
  }

  /** The lines of `task`'s log as they are written (those kept so far first), until the task is done or has failed for good, or `signal` aborts. */
  followLog(task: string, options: FollowLogOptions = {}): AsyncGenerator<FollowedLogLine, void, undefined> {
    this.assertOpen();
    return this.logReader.followLog(task, options);
  }

  /**
   * The spec's single worker loop on plans under `parent`, until `signal` aborts. `attrs` are the
   * back-off attributes and worker options. Shares this ZkPlan's session.
   */
  worker(parent: string, attrs: WorkerOptions = {}, signal: AbortSignal): Promise<void> {
    this.assertOpen();
    assertValidPath('parent', parent);
    if (!(signal instanceof AbortSignal)) throw new InvalidArgumentError('signal', 'expected an AbortSignal that stops the loop');
    const resolved = resolveWorkerOptions(attrs, this.workerIdPrefix, this.store.valueLimit);
    return runWorkerLoop(parent, resolved, signal, this.runtime(resolved));
  }

  /** Starts `count` worker loops on plans under `parent`; stop them with `pool.stop()`. */
  startWorkers(parent: string, options: WorkerPoolOptions = {}): WorkerPool {
    this.assertOpen();
    assertValidPath('parent', parent);
    const { count, drainTimeoutMs, retention } = resolvePoolSize(options);
    const resolved = resolveWorkerOptions(options, this.workerIdPrefix, this.store.valueLimit);
    const loops = Array.from({ length: count }, (_, index) => ({ ...resolved, workerId: `${resolved.workerId}/${index + 1}` }));
    const pool = new WorkerPool(parent, resolved.workerId, loops, drainTimeoutMs, this.runtime(resolved), retention);
    this.pools.add(pool);
    return pool;
  }

  /**
   * What this ZkPlan's workers keep in memory and attach to shared emitters, for the leak checks of
   * the tests and the soak benchmark (see ZkPlanFootprint); its fields follow the implementation.
   *
   * @internal
   */
  footprint(): ZkPlanFootprint {
    return footprintOf(this.dispatcher, this.store, this.zk, this.pools);
  }

  /** Stops every pool this ZkPlan started (draining running tasks), then closes the session. */
  async close(): Promise<void> {
    if (this.currentState !== 'open') return;
    this.currentState = 'closing';
    await Promise.all([
      this.scheduling.stopAll(),
      this.jobWiring.stopAll(),
      ...[...this.pools].map((pool) => pool.stop()),
      ...[...this.eventWatchers].map((watcher) => watcher.close()),
    ]);
    this.eventWatchers.clear();
    this.zk.close();
    this.currentState = 'closed';
  }

  private runtime(options: ResolvedWorkerOptions): WorkerLoopRuntime {
    const { zk, store, wakeUp, dispatcher, limits, functions } = this;
    return workerLoopRuntime({ zk, store, events: this, wakeUp, dispatcher, limits, functions, container: this.settings.container }, options);
  }

  /** Tells this process's workers to look for work now (a plan was just readied or changed), and passes `value` through. */
  private woken<T>(value: T): T {
    this.wakeUp.wake();
    return value;
  }

  private assertOpen(): void {
    if (this.currentState !== 'open') throw new IllegalStateError(`This ZkPlan is ${this.currentState}: connect a new one with ZkPlan.connect()`);
  }
}
