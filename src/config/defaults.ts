/**
 * Every default of the public API and the CLI, in one place. Each options type documents its
 * default with `@defaultValue`; this is where the value lives. `satisfies DefaultValues` keeps a
 * key from being dropped or mistyped while `as const` keeps the literal values visible to callers.
 */
import type { TriggerRule } from '../trigger/trigger-rule-names.js';

/**
 * The types of the defaults (see the option of the same name for what each means).
 *
 * @category Configuration
 */
export interface DefaultValues {
  /** `ConnectOptions.sessionTimeoutMs`. */
  readonly sessionTimeoutMs: number;
  /** `ConnectOptions.connectTimeoutMs`. */
  readonly connectTimeoutMs: number;
  /** `ConnectOptions.fullScanIntervalMs`. */
  readonly fullScanIntervalMs: number;
  /** `ConnectOptions.juteMaxBufferBytes`: ZooKeeper's own default `jute.maxbuffer`. */
  readonly juteMaxBufferBytes: number;
  /** `WorkerOptions.allowInline`. */
  readonly allowInline: boolean;
  /** `WorkerOptions.inlineTimeoutMs`. */
  readonly inlineTimeoutMs: number;
  /** `WorkerOptions.allowShell`. */
  readonly allowShell: boolean;
  /** The built-in `shell` task function (`call('shell', { command, … })`). */
  readonly shell: {
    /** `WorkerOptions.shellKillGraceMs`: after SIGTERM, how long a stopped command's process group has before SIGKILL. */
    readonly killGraceMs: number;
    /** The most of a command's stdout its result (`{ exitCode: 0, stdout }`) keeps, its first bytes; the task's log gets every line. Fixed. */
    readonly maxStdoutBytes: number;
  };
  /** `WorkerOptions.maxResultBytes`, and the limit of a stored value when none is given. */
  readonly maxResultBytes: number;
  /** `WorkerPoolOptions.count`. */
  readonly workerCount: number;
  /** `WorkerPoolOptions.drainTimeoutMs`. */
  readonly drainTimeoutMs: number;
  /** `WaitOptions.timeoutMs`. */
  readonly waitTimeoutMs: number;
  /** `WorkerPoolOptions.retention`. */
  readonly retention: {
    readonly maxAgeMs: number;
    readonly maxCount: number;
    readonly sweepIntervalMs: number;
  };
  /** `BackoffOptions` of idle worker rounds. */
  readonly backoff: { readonly initial: number; readonly increase: number; readonly max: number };
  /** `--connect-timeout-ms` of the CLI: a worker may wait for an ensemble that is still starting; a command that reads answers quickly or not at all. */
  readonly cliConnectTimeoutMs: { readonly worker: number; readonly read: number };
  /** `PlanOptions` of `createPlan`: failure policy, retry policy (also `addTask`'s overrides), history and priority. */
  readonly plan: {
    readonly failurePolicy: 'continue' | 'failFast';
    readonly priority: number;
    readonly retry: {
      readonly maxAttempts: number;
      readonly initialDelayMs: number;
      readonly multiplier: number;
      readonly maxDelayMs: number;
    };
    readonly history: boolean;
  };
  /** `TaskLogOptions` of workers (`WorkerOptions.taskLogs`). */
  readonly taskLogs: {
    readonly captureConsole: boolean;
    readonly echo: boolean;
    readonly maxBytesPerAttempt: number;
    readonly maxBytesPerPlan: number;
    readonly flushIntervalMs: number;
  };
  /** `PlanEventOptions` of `alerts.subscribe`, and the CLI's `--alert-webhook` timeout of one POST. */
  readonly planEvents: {
    readonly maxAttempts: number;
    readonly retryDelayMs: number;
    readonly webhookTimeoutMs: number;
  };
  /** A schedule's options (`schedules(parent).put`) and the scheduler's (`startScheduler`). */
  readonly schedule: {
    readonly timezone: string;
    readonly overlap: 'skip' | 'allow' | 'cancelPrevious';
    readonly misfire: 'fireAll' | 'fireOnce' | 'skip';
    readonly catchUpLimit: number;
    readonly misfireGraceMs: number;
    /** Tick records kept per schedule (recent runs); older ones go once they are also over `keepTicksMs` old. */
    readonly keepTicks: number;
    readonly keepTicksMs: number;
    /** How often a scheduler looks at every schedule besides its timers and watches (finishing ticks whose firer died). */
    readonly pollMs: number;
  };
  /** `NotYetOptions.afterMs` of `ctx.notYet`: when a task that waits is run again. */
  readonly notYetAfterMs: number;
  /** `SubPlanDefinition.checkEveryMs` of `subPlan`: how often a sub-plan task looks at its child plan while it runs. */
  readonly subPlanCheckEveryMs: number;
  /** `AddTaskOptions.trigger`: the rule of a task that names none (never stored with the task). */
  readonly trigger: TriggerRule;
  /** `BackfillOptions` of `schedules(parent).backfill`: the pace when none is given. */
  readonly backfill: {
    readonly mode: 'serial' | 'parallel';
    /** Tick plans at most under way at once in a parallel backfill. */
    readonly parallelConcurrency: number;
  };
  /** The address the web view, the metrics server and the task-log server listen on: this machine only. */
  readonly listenHost: string;
  /** `CreateLoggerOptions.level` of the worker log, and the CLI's `--log-level`. */
  readonly logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** `FollowLogOptions.pollMs`: how often a followed task log is read again while the task runs. */
  readonly followLogPollMs: number;
  /** `UiServerOptions.readOnly`: whether the web view refuses every action (else its own pages take them, on loopback). */
  readonly uiReadOnly: boolean;
  /** `UiServerOptions.timing`: how the web view's live feeds read ZooKeeper. */
  readonly uiFeeds: {
    /** Least time between the end of one read of a plan and the start of the next (bursts of watch events coalesce). */
    readonly minIntervalMs: number;
    /** The same for the plans list, which reads every plan's summary. */
    readonly plansListMinIntervalMs: number;
    /** A read at least this often even without events (a safety net). */
    readonly safetyRefreshMs: number;
    /** Pause before reading again after a read failed. */
    readonly retryMs: number;
    /** How long a feed outlives its last listener (a page reload takes it up again without arming new watches). */
    readonly lingerMs: number;
  };
  /** `JobWorkerOptions` of `startJobWorker` (and `zk-plan worker --jobs`), and a job's strategy. */
  readonly jobs: {
    /** How long an item's lease lasts unless renewed (renewed every third of it). */
    readonly leaseMs: number;
    /** A holder that could not renew stops this long before its lease ends. */
    readonly marginMs: number;
    /** The most two hosts' wall clocks are assumed to differ: a new holder waits this long past the lease's end. */
    readonly driftMs: number;
    /** How often the manager and each worker look again besides their watches. */
    readonly pollMs: number;
    /** The pause before a job function runs again after it threw (doubling with each failure in a row), or after a continuous run returned on its own. */
    readonly restartDelayMs: number;
    /** The longest pause between a failed run and its retry, however many failed in a row. */
    readonly maxRestartDelayMs: number;
    /** `JobDefinition.retries`: how many times a run that threw is tried again before its next tick. */
    readonly retries: number;
    /** `JobDefinition.misfire`: what a tick that came while the previous run of the share still ran does. */
    readonly misfire: 'runOnce' | 'skip';
    /** `JobDefinition.failover`: whether the new holder of an interrupted run's items runs them again at once. */
    readonly failover: boolean;
    /** `JobDefinition.keepRuns`: how many runs of a job its history keeps. */
    readonly keepRuns: number;
    /** Whether a job worker takes part in the manager election. */
    readonly manager: boolean;
    /** `JobDefinition.strategy`: how a job's items are spread over its workers. */
    readonly strategy: 'evenly' | 'rendezvous' | 'evenlyRendezvous';
  };
  /** `FaultHarnessOptions` of `runFaultHarness` (zk-plan/testing). */
  readonly faultHarness: {
    readonly workers: number;
    readonly loopsPerWorker: number;
    readonly sessionTimeoutMs: number;
    readonly timeoutMs: number;
    /** `FaultRate.probability`: the chance a fault hits at each execution's start. */
    readonly probability: number;
    /** `FaultRate.max`: the most times each fault is injected. */
    readonly maxPerFault: number;
    /** `SlowLinkFault.latencyMs`. */
    readonly latencyMs: number;
    /** `FaultHarnessOptions.atLeastOnce`: each fault asked for is injected at least once. */
    readonly atLeastOnce: boolean;
  };
  /** `StartZooKeeperOptions` of the local servers started for development and tests. */
  readonly localServer: {
    readonly tickTimeMs: number;
    readonly startTimeoutMs: number;
    readonly heapMb: number;
  };
  /** `FileLogSinkOptions`: the file sink's cap per try (the rest of a try's lines are dropped) and in all (the oldest plans' files go first). */
  readonly fileLogSink: { readonly maxBytesPerTry: number; readonly maxBytesTotal: number };
  /** The CLI's `--schedules` and `--jobs`: the parents its schedule and jobs commands use when none is given. */
  readonly cliParents: { readonly schedules: string; readonly jobs: string };
}

/**
 * The default of every option of the API and the CLI, by the option's name (e.g.
 * `DEFAULTS.sessionTimeoutMs`, `DEFAULTS.plan.retry`): what applies when an option is left out.
 *
 * @category Configuration
 */
export const DEFAULTS = {
  sessionTimeoutMs: 10_000,
  connectTimeoutMs: 15_000,
  fullScanIntervalMs: 10_000,
  juteMaxBufferBytes: 0xfffff,
  allowInline: false,
  inlineTimeoutMs: 5_000,
  allowShell: false,
  shell: { killGraceMs: 5_000, maxStdoutBytes: 64 * 1024 },
  maxResultBytes: 16 * 1024 * 1024,
  workerCount: 1,
  drainTimeoutMs: 30_000,
  waitTimeoutMs: 60_000,
  retention: { maxAgeMs: 7 * 24 * 60 * 60 * 1000, maxCount: 1_000, sweepIntervalMs: 60_000 },
  backoff: { initial: 100, increase: 1.5, max: 10_000 },
  cliConnectTimeoutMs: { worker: 15_000, read: 5_000 },
  plan: {
    failurePolicy: 'continue',
    priority: 0,
    retry: { maxAttempts: 3, initialDelayMs: 1_000, multiplier: 2, maxDelayMs: 60_000 },
    history: true,
  },
  taskLogs: {
    captureConsole: true,
    echo: true,
    maxBytesPerAttempt: 8 * 1024,
    maxBytesPerPlan: 2 * 1024 * 1024,
    flushIntervalMs: 500,
  },
  planEvents: { maxAttempts: 5, retryDelayMs: 1_000, webhookTimeoutMs: 10_000 },
  schedule: {
    timezone: 'UTC',
    overlap: 'skip',
    misfire: 'fireOnce',
    catchUpLimit: 10,
    misfireGraceMs: 60_000,
    keepTicks: 50,
    keepTicksMs: 10 * 60_000,
    pollMs: 1_000,
  },
  notYetAfterMs: 5_000,
  subPlanCheckEveryMs: 1_000,
  trigger: 'allSucceeded',
  backfill: { mode: 'serial', parallelConcurrency: 4 },
  listenHost: '127.0.0.1',
  logLevel: 'info',
  followLogPollMs: 250,
  uiReadOnly: false,
  uiFeeds: {
    minIntervalMs: 250,
    plansListMinIntervalMs: 1_000,
    safetyRefreshMs: 15_000,
    retryMs: 1_000,
    lingerMs: 30_000,
  },
  jobs: {
    leaseMs: 10_000,
    marginMs: 2_000,
    driftMs: 1_000,
    pollMs: 5_000,
    restartDelayMs: 1_000,
    maxRestartDelayMs: 60_000,
    retries: 3,
    misfire: 'runOnce',
    failover: true,
    keepRuns: 100,
    manager: true,
    strategy: 'evenly',
  },
  faultHarness: {
    workers: 3,
    loopsPerWorker: 2,
    sessionTimeoutMs: 2_000,
    timeoutMs: 120_000,
    probability: 0.25,
    maxPerFault: 3,
    latencyMs: 200,
    atLeastOnce: true,
  },
  localServer: { tickTimeMs: 2_000, startTimeoutMs: 30_000, heapMb: 256 },
  fileLogSink: { maxBytesPerTry: 16 * 1024 * 1024, maxBytesTotal: 1024 * 1024 * 1024 },
  cliParents: { schedules: '/schedules', jobs: '/jobs' },
} as const satisfies DefaultValues;
