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
 * The other entry points keep what most users never load: `zk-plan/testing` (local servers and
 * ensembles, the in-memory ZooKeeper, the raw client and layout, fault helpers), `zk-plan/metrics`
 * (Prometheus metrics and pino logs) and `zk-plan/ui` (the web view). This one loads none of
 * elkjs, prom-client, pino, cli-progress or commander (test/entry-points.test.ts).
 *
 * @packageDocumentation
 */
export { ZkPlan, type ZkPlanState, type ZkPlanFootprint } from './zk-plan.js';
export type { AddTaskOptions, TaskToAdd } from './plan/plan-writer.js';
export type { PlanStatus, PlanState } from './plan/plan-status.js';
export type { CancelOptions, PauseOptions, PauseOutcome } from './control/plan-control.js';
export type { PlanControlRecord, PlanControlState } from './control/control-record.js';
export type { WorkerInfo } from './registry/worker-info.js';
export type { SlotRecord } from './limits/limit-record.js';
export type { Explanation, ExplanationCode, PlanExplanation } from './explain/explain-task.js';
export type { PlanEvent, PlanEventKind } from './alerts/plan-events.js';
export { checkPlanSpec, type PlanSpec, type TaskSpecEntry, type ParamPlaceholder, type CheckedSpec, type SpecContext } from './spec/plan-spec.js';
export type { SubmitOptions, SubmittedPlan } from './spec/submit-plan.js';
export { PlanSpecError, type PlanSpecProblem } from './errors/spec-errors.js';
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
export { rerunSelection, RERUN_FAILED, type RerunFrom } from './spec/rerun-selection.js';
export { SnapshotError, type SnapshotProblem } from './errors/snapshot-errors.js';
export type { JobContext, JobFunction, JobItem } from './jobs/job-context.js';
export type { JobDefinition, JobMode, StoredJob, WorkPool } from './jobs/job-definition.js';
export type { Jobs, JobSummary, JobWorkerSummary, ItemHolder } from './jobs/jobs.js';
export type { JobWorkerHandle } from './jobs/job-service.js';
export type { JobWorkerOptions } from './jobs/job-worker-options.js';
export { evenly, rendezvous, type AssignmentStrategy, type AssignmentInput, type Assignment } from './jobs/strategies.js';
export { JobError, JobNotFoundError, type JobProblem } from './errors/job-errors.js';
export type { PlanEventListener } from './alerts/plan-event-watcher.js';
export { webhookListener, type WebhookBody } from './alerts/webhook.js';
export type { PlanView, PlanSummary, TaskView, TaskViewState, TaskHistoryRecord } from './plan/plan-view.js';
export type { TaskFailure, AttemptRecord } from './store/failure-policy.js';
export { DEFAULT_RETRY_POLICY, type PlanOptions, type RetryPolicy, type FailurePolicy } from './config/plan-options.js';
export { FunctionRegistry, type RegisteredFunction } from './exec/function-registry.js';
export type { FunctionSchemas, StandardSchemaV1 } from './exec/standard-schema.js';
export { call, inline, type TaskSpec, type CallSpec, type InlineSpec, type TaskDefinition } from './exec/task-spec.js';
export type { TaskContext, TaskFunction } from './exec/task-context.js';
export type { TaskLogger, LogLine, LogLevel, LogFields } from './logs/task-log-types.js';
export type { TaskLogAttempt } from './logs/attempt-log-record.js';
export type { TaskLogQuery, FollowLogOptions, FollowedLogLine } from './logs/task-log-reader.js';
export type { LogSink, TrySink, TryIdentity } from './logs/log-sink.js';
export { FileLogSink, type FileLogSinkOptions } from './logs/file-log-sink.js';
export { startLogServer, type LogServer, type LogServerOptions } from './logs/log-server.js';
export type { TaskLogOptions } from './config/task-log-options.js';
export { calcSleepTime } from './worker/backoff.js';
export { WorkerPool, type WorkerPoolState } from './worker/worker-pool.js';
export type { ZkPlanEvents, TaskEventLabels, TaskGivenBackReason } from './worker/worker-events.js';
export { DEFAULTS, type DefaultValues } from './config/defaults.js';
export type { BackoffOptions, ConnectOptions, PlanEventOptions, RetentionOptions, WaitOptions, WorkerOptions, WorkerPoolOptions } from './config/options.js';
export { zkPlanModule, startup, shutdown } from './di/zk-plan-module.js';
export type { ZkPlanModuleConfig } from './di/module-config.js';
export { ZK_CLIENT, ZK_PLAN, FUNCTION_REGISTRY, WORKER_POOL, ZK_PLAN_MODULE_CONFIG, ZK_PLAN_SETTINGS } from './di/tokens.js';
/** The raw client's type, as registered under ZK_CLIENT; the class is in `zk-plan/testing`. */
export type { ZkClient } from './zk/zk-client.js';
export { digestAcl, digestId, creatorAllAcl, openAcl, ACL_PERMS, type AclEntry, type AclPermName, type ZkAuth } from './zk/acl.js';
export { ZkPlanError } from './errors/base-error.js';
export { ZkError, ZkConnectTimeoutError, NativeClientUnpatchedError, type ZkErrorCode } from './errors/zk-error.js';
export { ZkAuthError } from './errors/zk-auth-error.js';
export { InvalidArgumentError, IllegalStateError, WaitTimeoutError } from './errors/usage-errors.js';
export {
  ArgTaskNotFoundError,
  ForeignArgTaskError,
  PlanNotFoundError,
  ResultNotFoundError,
  PlanFailedError,
  PlanAbortedError,
  PlanCancelledError,
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
export { ShellDisabledError, ShellExitError, ShellParamsError, ShellStartError } from './errors/shell-errors.js';
export type { ShellParams, ShellResult } from './shell/shell-params.js';
export { DuplicateTaskKeyError, TaskKeyNotFoundError } from './errors/task-key-errors.js';
