/**
 * zk-plan: a ZooKeeper-backed dependency-plan executor. Build a plan of tasks whose inputs are
 * the results of other tasks; a cluster of workers runs each task once its inputs exist and
 * survives the death of any of them.
 *
 * ```ts
 * import { FunctionRegistry, ZkPlan, call, startZooKeeper } from 'zk-plan';
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
 * @packageDocumentation
 */
import 'reflect-metadata';

export { ZkPlan, type ZkPlanState } from './plan/zk-plan.js';
export type { AddTaskOptions, TaskToAdd } from './plan/plan-writer.js';
export type { PlanStatus, PlanState } from './plan/plan-status.js';
export type { PlanView, PlanSummary, TaskView, TaskViewState, TaskHistoryRecord } from './plan/plan-view.js';
export type { TaskFailure, AttemptRecord } from './store/failure-policy.js';
export {
  DEFAULT_RETRY_POLICY,
  type PlanOptions,
  type RetryPolicy,
  type FailurePolicy,
} from './config/plan-options.js';
export { FunctionRegistry, type RegisteredFunction } from './exec/function-registry.js';
export { call, inline, type TaskSpec, type CallSpec, type InlineSpec, type TaskDefinition } from './exec/task-spec.js';
export type { TaskContext, TaskFunction } from './exec/task-context.js';
export { calcSleepTime } from './worker/backoff.js';
export { classifyTask, type TaskState } from './store/task-state.js';
export { WorkerPool, type WorkerPoolState } from './worker/worker-pool.js';
export type { ZkPlanEvents } from './worker/worker-events.js';
export {
  DEFAULTS,
  DEFAULT_BACKOFF,
  type BackoffOptions,
  type ConnectOptions,
  type WaitOptions,
  type WorkerOptions,
  type WorkerPoolOptions,
} from './config/options.js';
export { zkPlanModule, startup, shutdown, type ZkPlanModuleConfig } from './di/zk-plan-module.js';
export { ZK_CLIENT, ZK_PLAN, FUNCTION_REGISTRY, WORKER_POOL, ZK_PLAN_MODULE_CONFIG, ZK_PLAN_SETTINGS } from './di/tokens.js';
export { ZkClient, type ZkClientOptions, type ZkSession, type SessionState, type CreateMode, type WatchEvent } from './zk/zk-client.js';
export { digestAcl, digestId, creatorAllAcl, openAcl, ACL_PERMS, type AclEntry, type AclPermName, type ZkAuth } from './zk/acl.js';
export * as layout from './zk/layout.js';
export { encodeValue, decodeValue, MAX_VALUE_BYTES } from './serialization/codec.js';
export {
  startZooKeeper,
  startEnsemble,
  findZooKeeperDistribution,
  type StartZooKeeperOptions,
  type ZooKeeperServer,
  type ZooKeeperEnsemble,
  type EnsembleMember,
} from './server/zookeeper-server.js';
export { ZkPlanError } from './errors/base-error.js';
export { ZkError, ZkConnectTimeoutError, type ZkErrorCode } from './errors/zk-error.js';
export { ZkAuthError } from './errors/zk-auth-error.js';
export { InvalidArgumentError, IllegalStateError, WaitTimeoutError } from './errors/usage-errors.js';
export {
  ArgTaskNotFoundError,
  ForeignArgTaskError,
  PlanNotFoundError,
  ResultNotFoundError,
  PlanFailedError,
  PlanAbortedError,
  type FailedTaskReport,
} from './errors/plan-errors.js';
export {
  UnknownFunctionError,
  InlineDisabledError,
  MalformedNodeError,
  UnserializableValueError,
  TaskExecutionError,
  OwnershipLostError,
  ValueTooLargeError,
  PermanentError,
  TaskTimeoutError,
} from './errors/task-errors.js';
export { PortInUseError, ZooKeeperNotFoundError, ZooKeeperStartError } from './errors/server-errors.js';
export {
  createWorkerMetrics,
  startMetricsServer,
  METRIC_PREFIX,
  type WorkerMetrics,
  type WorkerMetricsOptions,
  type MetricsServer,
  type MetricsServerOptions,
} from './observability/metrics.js';
export { createLogger, logWorkerEvents, serializeError, type CreateLoggerOptions, type LoggedError, type Logger } from './observability/logger.js';
export type { ObservedZkPlan, ObservedZkClient, ZkOperationListener } from './observability/observed.js';
export { startUiServer, isLoopbackHost, type UiServer, type UiServerOptions } from './ui/ui-server.js';
export type { FeedTiming } from './ui/plan-feed.js';
export { IncompleteValueError, ResultTooLargeError } from './errors/value-errors.js';
