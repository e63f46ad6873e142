/**
 * zk-plan: a ZooKeeper-backed dependency-plan executor. Build a plan of tasks whose inputs are
 * the results of other tasks; a cluster of workers runs each task once its inputs exist and
 * survives the death of any of them.
 *
 * ```ts
 * import { FunctionRegistry, ZkPlan, call } from 'zk-plan';
 * import { startZooKeeper } from 'zk-plan/testing';
 *
 * const server = await startZooKeeper(); // or use your ensemble's connect string
 * const functions = new FunctionRegistry()
 *   .register('constant', (ctx) => ctx.params[0])
 *   .register('sum', (_ctx, ...inputs: number[]) => inputs.reduce((a, b) => a + b, 0));
 * const zkPlan = await ZkPlan.connect({ connect: server.connectString, functions });
 * const plan = await zkPlan.createPlan('/plans');
 * const one = await zkPlan.addTask(plan, call('constant', 1));
 * const two = await zkPlan.addTask(plan, call('constant', 2));
 * const total = await zkPlan.addTask(plan, call('sum'), [one, two], { keepResult: true });
 * await zkPlan.markAsReady(plan);
 * const pool = zkPlan.startWorkers('/plans', { count: 4 });
 * await zkPlan.waitForCompletion(plan, { timeoutMs: 60_000 });
 * console.log(await zkPlan.getResult(total)); // 3
 * await pool.stop();
 * await zkPlan.close();
 * await server.stop();
 * ```
 *
 * The exports below are grouped the way a program meets them: plans and tasks, their status, the
 * workers that run them, control (pause, cancel), concurrency limits, explanations, plan events and
 * alerts, declarative specs, snapshots, schedules, jobs, task logs, configuration (options,
 * defaults, ACLs, dependency injection), the ZooKeeper client's types, and the errors. Everything
 * here is public API: api/zk-plan.api.md records it, and `npm run api:check` fails when it changes
 * unnoticed.
 *
 * The other entry points keep what most users never load: `zk-plan/testing` (local servers and
 * ensembles, the in-memory ZooKeeper, the raw client and layout, fault helpers), `zk-plan/metrics`
 * (Prometheus metrics and pino logs) and `zk-plan/ui` (the web view). This one loads none of
 * elkjs, prom-client, pino, cli-progress or commander (test/entry-points.test.ts).
 *
 * @packageDocumentation
 * @module zk-plan
 */

// ---------------------------------------------------------------------------------------------
// Plans and tasks: connect, register the functions workers may run, build a plan task by task,
// ready it, wait for it and read its results.
// ---------------------------------------------------------------------------------------------
export { ZkPlan, type ZkPlanState } from './zk-plan.js';
export type { ZkPlanSettings } from './plan/zk-plan-settings.js';
export { FunctionRegistry, type RegisteredFunction } from './exec/function-registry.js';
export type {
  FunctionSchemas,
  StandardSchemaV1,
  StandardResult,
  StandardIssue,
  JsonSchemaOf,
} from './exec/standard-schema.js';
export { call, inline, type TaskSpec, type CallSpec, type InlineSpec } from './exec/task-spec.js';
export type { SpawnTask, TaskContext, TaskFunction } from './exec/task-context.js';
export type { Continuation } from './spawn/continuation.js';
// Waiting without a worker: a function's "not yet" (ctx.notYet), and dependent tasks built on it.
export type { NotYet, NotYetOptions } from './exec/not-yet.js';
export { waitForPlan, WAIT_FOR_PLAN_FUNCTION } from './dependent/dependency-target.js';
export type { DependencyTarget } from './dependent/dependency-target.js';
export { subPlan, SUB_PLAN_FUNCTION } from './subplan/sub-plan-target.js';
export type { SubPlanDefinition } from './subplan/sub-plan-target.js';
export type { DependencyResult } from './dependent/dependency-decision.js';
// Skip and trigger rules: a task with nothing to do, and tasks that run on how their inputs ended.
export { skip, type Skip } from './trigger/skip.js';
export type { TriggerRule } from './trigger/trigger-rule.js';
export type { InputOutcome, InputFailure } from './trigger/task-outcome.js';
export type { MapStep, MappedTaskOptions } from './spawn/map-step.js';
export type { AddTaskOptions, TaskToAdd } from './config/task-options.js';
export {
  DEFAULT_RETRY_POLICY,
  type PlanOptions,
  type RetryPolicy,
  type FailurePolicy,
} from './config/plan-options.js';
export type { WaitOptions } from './config/options.js';
export type { ShellParams, ShellResult } from './shell/shell-params.js';

// ---------------------------------------------------------------------------------------------
// The facade's sub-APIs: `zkPlan.plans`, `zkPlan.control`, `zkPlan.limits(parent)`,
// `zkPlan.explain`, `zkPlan.snapshots`, `zkPlan.logs` and `zkPlan.alerts` (made by ZkPlan only).
// ---------------------------------------------------------------------------------------------
export type { PlansApi } from './api/plans-api.js';
export type { ControlApi } from './api/control-api.js';
export type { LimitsApi, LimitState } from './api/limits-api.js';
export type { ExplainApi } from './api/explain-api.js';
export type { SnapshotsApi } from './api/snapshots-api.js';
export type { LogsApi } from './api/logs-api.js';
export type { AlertsApi, AlertSubscription } from './api/alerts-api.js';

// ---------------------------------------------------------------------------------------------
// Plan status and views: where a plan stands, every task with its history, failures and attempts.
// ---------------------------------------------------------------------------------------------
export type { PlanStatus } from './plan/plan-status.js';
export type { PlanState } from './plan/plan-progress.js';
export type { PlanCounts } from './plan/plan-progress.js';
export type { PlanView, PlanSummary, TaskView } from './plan/plan-view.js';
export type { TaskViewState } from './plan/plan-progress.js';
export type { TaskFailure } from './store/failure-policy.js';
export type { TaskTry, TaskTryOutcome } from './plan/task-tries-view.js';

// ---------------------------------------------------------------------------------------------
// Workers: pools of worker loops that claim and run tasks, the live registry of workers, and the
// events a ZkPlan emits as its workers go.
// ---------------------------------------------------------------------------------------------
export type { WorkerPool, WorkerPoolState } from './worker/worker-pool.js';
export type {
  BackoffOptions,
  WorkerOptions,
  WorkerPoolOptions,
  RetentionOptions,
} from './config/options.js';
export type { WorkerInfo } from './registry/worker-info.js';
export type { ZkPlanEvents, TaskEventLabels, TaskGivenBackReason } from './worker/worker-events.js';

// ---------------------------------------------------------------------------------------------
// Control: pause, resume and cancel a plan across the cluster.
// ---------------------------------------------------------------------------------------------
export type { CancelOptions, PauseOptions, PauseOutcome } from './control/plan-control.js';
export type { PlanControlRecord, PlanControlState } from './control/control-record.js';

// ---------------------------------------------------------------------------------------------
// Limits: cluster-wide concurrency limits by key (`zkPlan.limits(parent)`).
// ---------------------------------------------------------------------------------------------
export type { SlotRecord } from './limits/limit-record.js';

// ---------------------------------------------------------------------------------------------
// Explain: why a task is not running, why a plan is not progressing.
// ---------------------------------------------------------------------------------------------
export type {
  Explanation,
  ExplanationCode,
  PlanExplanation,
  Remedy,
} from './explain/explain-task.js';

// ---------------------------------------------------------------------------------------------
// Events and alerts: tasks that fail for good and plans that end, delivered once per event across
// the cluster (`zkPlan.alerts.subscribe`), and a listener that posts them to a webhook.
// ---------------------------------------------------------------------------------------------
export type { PlanEvent, PlanEventKind } from './alerts/plan-events.js';
export type { PlanEventListener } from './alerts/plan-event-watcher.js';
export type { PlanEventOptions } from './config/options.js';
export {
  jobRunWebhook,
  webhookListener,
  type JobRunWebhookBody,
  type WebhookBody,
} from './alerts/webhook.js';
export {
  forwardJobRunFailures,
  type JobRunAlertForwarding,
  type JobRunAlertOptions,
} from './alerts/job-run-alerts.js';

// ---------------------------------------------------------------------------------------------
// Specs: a plan written as data (tasks by key, `{ $param }` placeholders), submitted in one call.
// ---------------------------------------------------------------------------------------------
export type { PlanSpec, TaskSpecEntry, ParamPlaceholder } from './spec/plan-spec.js';
export type { SubmitOptions, SubmittedPlan } from './spec/submit-plan.js';

// ---------------------------------------------------------------------------------------------
// Snapshots: export a plan as a self-contained value, import it elsewhere, rerun part of it.
// ---------------------------------------------------------------------------------------------
export {
  SNAPSHOT_FORMAT,
  SNAPSHOT_VERSION,
  UNKNOWN_FUNCTION,
  assertPlanSnapshot,
  type PlanSnapshot,
  type SnapshotTask,
  type ResultSource,
  type UnfinishedState,
} from './snapshot/plan-snapshot.js';
export type { ImportedPlan } from './snapshot/import-plan.js';
export type { RerunOptions } from './snapshot/rerun.js';
export { RERUN_FAILED, type RerunFrom } from './spec/rerun-selection.js';

// ---------------------------------------------------------------------------------------------
// Schedules: cron schedules that make a plan from a spec at each tick, fired by `startScheduler`.
// ---------------------------------------------------------------------------------------------
export type {
  Schedules,
  ScheduleSummary,
  ScheduleRun,
  TriggeredTick,
} from './schedule/schedules.js';
export type { FireState } from './schedule/tick-firing.js';
export type { ScheduleInput, StoredSchedule } from './schedule/schedule-definition.js';
export type { MisfirePolicy, OverlapPolicy } from './schedule/tick-decisions.js';
export type { TickKind, TickState } from './schedule/tick-record.js';
export type { SchedulerOptions } from './config/options.js';
// Backfills: a schedule's past ticks fired as plans, serially or in parallel (`schedules.backfill`).
export type { BackfillOptions, BackfillStatus } from './backfill/backfill-options.js';
export type { BackfillMode, BackfillState } from './backfill/backfill-record.js';

// ---------------------------------------------------------------------------------------------
// Jobs: long-running work split into items (shards or named items) that the live job workers share.
// ---------------------------------------------------------------------------------------------
export type {
  Jobs,
  JobSummary,
  JobWorkerSummary,
  ItemHolder,
  JobRunHistory,
  JobRunCounts,
} from './jobs/jobs.js';
export type {
  JobDefinition,
  JobMisfire,
  JobMode,
  StoredJob,
  WorkPool,
} from './jobs/job-definition.js';
export type {
  JobRun,
  JobRunCause,
  JobRunError,
  JobRunItem,
  JobRunLogLine,
  JobRunMisfire,
  JobRunOutcome,
  JobRunRecord,
  JobRunState,
} from './jobs/job-run-record.js';
export type { JobItemFailure } from './jobs/job-run-store.js';
export type { JobWorkerInfo } from './jobs/job-store.js';
export type { JobContext, JobFunction, JobItem } from './jobs/job-context.js';
export type { JobWorkerHandle } from './jobs/job-service.js';
export type { JobWorkerOptions } from './config/job-worker-options.js';
export {
  evenly,
  rendezvous,
  evenlyRendezvous,
  type AssignmentStrategy,
  type AssignmentInput,
  type Assignment,
} from './jobs/strategies.js';

// ---------------------------------------------------------------------------------------------
// Logs: what task functions log (`ctx.log`, captured `console.*`), kept in ZooKeeper per try, read
// back or followed; sinks that keep every line elsewhere, and a server that serves them.
// ---------------------------------------------------------------------------------------------
export type { TaskLogger, LogLine, LogLevel, LogFields } from './logs/task-log-types.js';
export type { TaskLogAttempt } from './logs/attempt-log-record.js';
export type { TaskLogQuery, FollowLogOptions, FollowedLogLine } from './logs/task-log-reader.js';
export type { LogSink, TrySink, TryIdentity } from './logs/log-sink.js';
export { FileLogSink, type FileLogSinkOptions } from './logs/file-log-sink.js';
export { startLogServer, type LogServer, type LogServerOptions } from './logs/log-server.js';
export type { TaskLogOptions } from './config/task-log-options.js';

// ---------------------------------------------------------------------------------------------
// Configuration: connecting, the defaults of every option, ACLs and credentials, and the tsyringe
// module that wires a ZkPlan into a dependency-injection container.
// ---------------------------------------------------------------------------------------------
export type { ConnectOptions } from './config/options.js';
export { DEFAULTS, type DefaultValues } from './config/defaults.js';
export {
  digestAcl,
  digestId,
  creatorAllAcl,
  openAcl,
  ACL_PERMS,
  type AclEntry,
  type AclPermName,
  type ZkAuth,
} from './zk/acl.js';
export { zkPlanModule, startup, shutdown } from './di/zk-plan-module.js';
export type { ZkPlanModuleConfig } from './di/module-config.js';
export {
  ZK_CLIENT,
  ZK_PLAN,
  FUNCTION_REGISTRY,
  WORKER_POOL,
  ZK_PLAN_MODULE_CONFIG,
} from './di/tokens.js';

// ---------------------------------------------------------------------------------------------
// The ZooKeeper client's types: the client a ZkPlan runs on (`zkPlan.zk`, the ZK_CLIENT token).
// The class itself, and the in-memory double, are in `zk-plan/testing`.
// ---------------------------------------------------------------------------------------------
export type { Zk } from './zk/zk.js';
export type { ZkBase } from './zk/zk-base.js';
export type { ZkClient } from './zk/zk-client.js';
export type {
  CreateMode,
  SessionState,
  WatchEvent,
  Watcher,
  WriteOptions,
  ZkClientEvents,
  ZkClientOptions,
  ZkOperationCounts,
  ZkSession,
} from './zk/zk-client-types.js';
export type { ZkStat } from './zk/native-client.js';

// ---------------------------------------------------------------------------------------------
// Errors: every error zk-plan throws extends ZkPlanError and carries a stable `code`.
// ---------------------------------------------------------------------------------------------
export { ZkPlanError, type ZkPlanErrorDetails } from './errors/base-error.js';
export {
  InvalidArgumentError,
  IllegalStateError,
  WaitTimeoutError,
} from './errors/usage-errors.js';
export {
  ZkError,
  ZkConnectTimeoutError,
  NativeClientUnpatchedError,
  ForeignAclError,
  type ZkErrorCode,
} from './errors/zk-error.js';
export { ZkAuthError } from './errors/zk-auth-error.js';
export {
  ArgTaskNotFoundError,
  ForeignArgTaskError,
  PlanNotFoundError,
  PlanTooLargeError,
  ResultNotFoundError,
  PlanFailedError,
  PlanAbortedError,
  PlanCancelledError,
  PlanDeletedError,
  PlanFinishedError,
  PlanPausedError,
  type FailedTaskReport,
} from './errors/plan-errors.js';
export {
  UnknownFunctionError,
  InlineDisabledError,
  MalformedNodeError,
  UnserializableValueError,
  TaskExecutionError,
  OwnershipLostError,
  DrainTimeoutError,
  ValueTooLargeError,
  PermanentError,
  TaskTimeoutError,
  SchemaMismatchError,
} from './errors/task-errors.js';
export { IncompleteValueError, ResultTooLargeError } from './errors/value-errors.js';
export {
  ShellDisabledError,
  ShellExitError,
  ShellParamsError,
  ShellStartError,
  type ShellEnd,
} from './errors/shell-errors.js';
export { DuplicateTaskKeyError, TaskKeyNotFoundError } from './errors/task-key-errors.js';
export { SpawnMismatchError } from './errors/spawn-errors.js';
export { PlanSpecError, type PlanSpecProblem } from './errors/spec-errors.js';
export { SnapshotError, type SnapshotProblem } from './errors/snapshot-errors.js';
export { JobError, JobNotFoundError, type JobProblem } from './errors/job-errors.js';
export { BackfillNotFoundError, ScheduleNotFoundError } from './errors/schedule-errors.js';
export { DependencyFailedError } from './errors/dependency-errors.js';
export { SubPlanFailedError } from './errors/sub-plan-errors.js';
export { InputFailedError, TaskSkippedError } from './errors/trigger-errors.js';
