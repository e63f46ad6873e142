import { EventEmitter } from 'node:events';
import { hostname } from 'node:os';
import type { PlanEventWatcher } from './alerts/plan-event-watcher.js';
import { AlertsApi } from './api/alerts-api.js';
import { ControlApi } from './api/control-api.js';
import { ExplainApi } from './api/explain-api.js';
import type { FacadeState } from './api/facade-state.js';
import { LimitsApi } from './api/limits-api.js';
import { LogsApi } from './api/logs-api.js';
import { PlansApi } from './api/plans-api.js';
import { SnapshotsApi } from './api/snapshots-api.js';
import {
  resolveConnectOptions,
  resolveJuteMaxBufferBytes,
  resolveMaxResultBytes,
  resolvePoolSize,
  resolveWaitOptions,
  resolveWorkerOptions,
  type ConnectOptions,
  type ResolvedWorkerOptions,
  type SchedulerOptions,
  type WaitOptions,
  type WorkerOptions,
  type WorkerPoolOptions,
} from './config/options.js';
import { DEFAULTS } from './config/defaults.js';
import { DependencyLookup } from './dependent/dependency-lookup.js';
import { SubPlanRunner } from './subplan/sub-plan-runner.js';
import type { PlanOptions } from './config/plan-options.js';
import { PlanControl } from './control/plan-control.js';
import { rootContainer } from './di/container.js';
import { IllegalStateError, InvalidArgumentError } from './errors/usage-errors.js';
import { FunctionRegistry } from './exec/function-registry.js';
import type { TaskSpec } from './exec/task-spec.js';
import { Explainer } from './explain/explainer.js';
import {
  JobWiring,
  type JobWorkerHandle,
  type JobWorkerOptions,
  type Jobs,
} from './jobs/job-wiring.js';
import { ConcurrencyLimits } from './limits/concurrency-limits.js';
import { TaskLogReader } from './logs/task-log-reader.js';
import { CancelHistory } from './plan/cancel-history.js';
import { footprintOf, type ZkPlanFootprint } from './plan/footprint.js';
import { PlanDescriber } from './plan/plan-describer.js';
import { PlanReader } from './plan/plan-reader.js';
import { PlanWriter } from './plan/plan-writer.js';
import type { AddTaskOptions, TaskToAdd } from './config/task-options.js';
import type { ZkPlanSettings } from './plan/zk-plan-settings.js';
import { listWorkers } from './registry/worker-registry.js';
import type { WorkerInfo } from './registry/worker-info.js';
import type { Schedules } from './schedule/schedules.js';
import { Scheduling } from './schedule/scheduling.js';
import { PlanSnapshots } from './snapshot/plan-snapshots.js';
import type { PlanSpec } from './spec/plan-spec.js';
import {
  buildCheckedSpec,
  checkSpecForSubmit,
  type SubmitOptions,
  type SubmittedPlan,
} from './spec/submit-plan.js';
import { TaskStore } from './store/task-store.js';
import { Dispatcher } from './worker/dispatcher.js';
import { WakeUp } from './worker/wake-up.js';
import type { ZkPlanEvents } from './worker/worker-events.js';
import { runWorkerLoop, workerLoopRuntime, type WorkerLoopRuntime } from './worker/worker-loop.js';
import { WorkerPool } from './worker/worker-pool.js';
import { assertValidPath } from './zk/layout.js';
import { ZkClient } from './zk/zk-client.js';
import { TaskSpawner } from './spawn/task-spawner.js';
import type { Zk } from './zk/zk.js';

/**
 * A ZkPlan's lifecycle: `open` until `close()` is called, `closing` while its pools drain, then `closed` (every call fails with IllegalStateError).
 *
 * @category Plans and tasks
 */
export type ZkPlanState = 'open' | 'closing' | 'closed';

/**
 * The zk-plan API on one ZooKeeper session. The calls of the original zk-plan stay on it (createPlan,
 * addTask, markAsReady, worker, planCompleted), with the other ways to build and run plans
 * (addTasks, submitPlan, startWorkers, waitForCompletion, getResult); the rest is grouped in
 * sub-APIs: `plans` (status, describe, list, delete), `control` (pause, resume, cancel, retry),
 * `limits(parent)`, `explain`, `snapshots` (export, import, rerun), `logs`, `alerts`,
 * `schedules(parent)` and `jobs(parent)`. A complete program: examples/quick-start.ts.
 *
 * @category Plans and tasks
 */
export class ZkPlan<Client extends Zk = ZkClient> extends EventEmitter<ZkPlanEvents> {
  /** Reading and removing plans: status, describe, list, delete, taskOfKey. */
  readonly plans: PlansApi;
  /** Steering plans: pause, resume, cancel, retryFailed. */
  readonly control: ControlApi;
  /** Why a task is not running, why a plan is not progressing. */
  readonly explain: ExplainApi;
  /** Export a plan, import a snapshot, rerun a plan's spec. */
  readonly snapshots: SnapshotsApi;
  /** What tasks logged, read and followed from any process. */
  readonly logs: LogsApi;
  /** Listeners called once per plan event across the cluster. */
  readonly alerts: AlertsApi;
  private currentState: ZkPlanState = 'open';
  private readonly store: TaskStore;
  private readonly spawner: TaskSpawner;
  private readonly writer: PlanWriter;
  private readonly reader: PlanReader;
  private readonly concurrencyLimits: ConcurrencyLimits;
  private readonly subPlans: SubPlanRunner;
  private readonly eventWatchers = new Set<PlanEventWatcher>();
  private readonly scheduling: Scheduling;
  private readonly jobWiring: JobWiring;
  private readonly wakeUp = new WakeUp();
  private readonly dispatcher: Dispatcher;
  private readonly pools = new Set<WorkerPool>();
  private readonly workerIdPrefix = `${hostname()}:${process.pid}`;
  /** What the sub-APIs share with this facade. */
  private readonly facade: FacadeState = {
    assertOpen: () => this.assertOpen(),
    wakeWorkers: () => this.wakeUp.wake(),
  };

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
    this.writer = new PlanWriter(
      zk,
      this.store,
      functions,
      this.reader.keys,
      resolveJuteMaxBufferBytes(settings.juteMaxBufferBytes),
    );
    this.spawner = new TaskSpawner(zk, this.store, this.writer);
    const describer = new PlanDescriber(zk, this.store, this.reader);
    const cancelHistory = new CancelHistory(zk, this.store, describer);
    const control = new PlanControl(
      zk,
      this.store,
      async (plan) => (await this.reader.planStatus(plan)).state,
      (plan, cancelledAt) => cancelHistory.record(plan, cancelledAt),
    );
    this.concurrencyLimits = new ConcurrencyLimits(zk);
    const { reader, writer } = this;
    this.subPlans = new SubPlanRunner({
      zk,
      writer,
      functions,
      listWorkers: (parent) => listWorkers(zk, parent),
      planStatus: (plan) => reader.planStatus(plan),
      getResult: (task) => reader.getResult(task),
      readControl: (plan) => control.read(plan),
      pause: (plan) => control.pause(plan),
      resume: (plan) => control.resume(plan),
      deletePlan: (plan) => describer.deletePlan(plan),
      cancel: (plan, reason) => control.cancel(plan, { reason }),
    });
    const explainer = new Explainer(zk, this.store, describer, control, this.concurrencyLimits);
    this.dispatcher = new Dispatcher(
      zk,
      this.store,
      this.wakeUp,
      settings.fullScanIntervalMs ?? DEFAULTS.fullScanIntervalMs,
    );
    const { workerIdPrefix: identity } = this;
    this.scheduling = new Scheduling({
      zk,
      writer,
      reader,
      control,
      functions,
      events: this,
      identity,
      wake: () => this.wakeUp.wake(),
    });
    this.jobWiring = new JobWiring({ zk, functions, events: this });
    const snapshots = new PlanSnapshots({
      zk,
      writer,
      store: this.store,
      functions,
      listWorkers: (parent) => listWorkers(zk, parent),
    });
    this.plans = new PlansApi(this.facade, reader, describer);
    this.control = new ControlApi(this.facade, control, writer);
    this.explain = new ExplainApi(this.facade, explainer);
    this.snapshots = new SnapshotsApi(this.facade, snapshots);
    this.logs = new LogsApi(this.facade, new TaskLogReader(zk));
    this.alerts = new AlertsApi(
      this.facade,
      zk,
      (plan) => reader.planStatus(plan),
      this.eventWatchers,
    );
    // Without a listener, an 'error'-like event would be lost silently; worker errors are events, never crashes.
    this.setMaxListeners(0);
  }

  /** Connects to ZooKeeper and returns a ZkPlan on a new session. */
  static async connect(options: ConnectOptions): Promise<ZkPlan> {
    const resolved = resolveConnectOptions(options);
    const functions = options.functions ?? new FunctionRegistry();
    if (!(functions instanceof FunctionRegistry))
      throw new InvalidArgumentError('functions', 'expected a FunctionRegistry');
    const zk = await ZkClient.connect(resolved);
    return new ZkPlan(zk, functions, {
      container: options.container ?? rootContainer.createChildContainer(),
      ...(options.maxResultBytes !== undefined ? { maxResultBytes: options.maxResultBytes } : {}),
      ...(options.fullScanIntervalMs !== undefined
        ? { fullScanIntervalMs: options.fullScanIntervalMs }
        : {}),
      ...(options.juteMaxBufferBytes !== undefined
        ? { juteMaxBufferBytes: options.juteMaxBufferBytes }
        : {}),
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
  addTask(
    plan: string,
    task: TaskSpec,
    argTasks: readonly string[] = [],
    options: AddTaskOptions = {},
  ): Promise<string> {
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
    await this.writer.markAsReady(plan);
    this.wakeUp.wake();
  }

  /** True once the plan has no task left. */
  planCompleted(plan: string): Promise<boolean> {
    this.assertOpen();
    return this.reader.planCompleted(plan);
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

  /** The result of a task added with `{ keepResult: true }`, after it completed. */
  getResult(task: string): Promise<unknown> {
    this.assertOpen();
    return this.reader.getResult(task);
  }

  /**
   * Builds and readies a plan from a declarative spec (`{ tasks: { [key]: { fn, params?, inputs?, options? } }, options? }`),
   * `{ $param: name }` filled from `params`; checked in full first (PlanSpecError naming the task key). Returns each task's path by key.
   */
  async submitPlan(
    parent: string,
    spec: PlanSpec,
    options: SubmitOptions = {},
  ): Promise<SubmittedPlan> {
    this.assertOpen();
    assertValidPath('parent', parent);
    const checked = await checkSpecForSubmit(
      spec,
      this.functions,
      await listWorkers(this.zk, parent),
      options,
    );
    const submitted = await buildCheckedSpec(
      this.writer,
      this.zk,
      checked,
      { spec, params: options.params ?? {} },
      parent,
    );
    this.wakeUp.wake();
    return submitted;
  }

  /**
   * The concurrency limits under `parent`: at most `limit` tasks added with `{ concurrencyKey: key }`
   * run at once across every worker and plan under it (set, get, list).
   */
  limits(parent: string): LimitsApi {
    this.assertOpen();
    assertValidPath('parent', parent);
    return new LimitsApi(this.facade, this.concurrencyLimits, parent);
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
   * The spec's single worker loop on plans under `parent`, until `signal` aborts. `attrs` are the
   * back-off attributes and worker options. Shares this ZkPlan's session.
   */
  worker(parent: string, attrs: WorkerOptions = {}, signal: AbortSignal): Promise<void> {
    this.assertOpen();
    assertValidPath('parent', parent);
    if (!(signal instanceof AbortSignal))
      throw new InvalidArgumentError('signal', 'expected an AbortSignal that stops the loop');
    const resolved = resolveWorkerOptions(attrs, this.workerIdPrefix, this.store.valueLimit);
    return runWorkerLoop(parent, resolved, signal, this.runtime(resolved));
  }

  /** Starts `count` worker loops on plans under `parent`; stop them with `pool.stop()`. */
  startWorkers(parent: string, options: WorkerPoolOptions = {}): WorkerPool {
    this.assertOpen();
    assertValidPath('parent', parent);
    const { count, drainTimeoutMs, retention } = resolvePoolSize(options);
    const resolved = resolveWorkerOptions(options, this.workerIdPrefix, this.store.valueLimit);
    const loops = Array.from({ length: count }, (_, index) => ({
      ...resolved,
      workerId: `${resolved.workerId}/${index + 1}`,
    }));
    const pool = new WorkerPool(
      parent,
      resolved.workerId,
      loops,
      drainTimeoutMs,
      this.runtime(resolved),
      retention,
    );
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
    const { zk, store, wakeUp, dispatcher, functions, spawner } = this;
    const limits = this.concurrencyLimits;
    return workerLoopRuntime(
      {
        zk,
        store,
        events: this,
        wakeUp,
        dispatcher,
        limits,
        functions,
        spawner,
        container: this.settings.container,
        dependencies: new DependencyLookup(zk, (plan) => this.reader.planStatus(plan)),
        subPlans: this.subPlans,
      },
      options,
    );
  }

  private assertOpen(): void {
    if (this.currentState !== 'open')
      throw new IllegalStateError(
        `This ZkPlan is ${this.currentState}: connect a new one with ZkPlan.connect()`,
      );
  }
}
