/**
 * `zk-plan/metrics`: Prometheus metrics of a worker process (prom-client) and structured logs of
 * its events (pino). Kept out of `zk-plan` so that users who want neither never load them.
 *
 * @module zk-plan/metrics
 */
export {
  createWorkerMetrics,
  startMetricsServer,
  type WorkerMetrics,
  type WorkerMetricsOptions,
  type MetricsServer,
  type MetricsServerOptions,
} from './metrics.js';
export { METRIC_PREFIX } from './worker-metric-definitions.js';
export {
  createLogger,
  logWorkerEvents,
  serializeError,
  type CreateLoggerOptions,
  type LoggedError,
  type Logger,
} from './logger.js';
export type { ObservedZkPlan, ObservedZkClient, ZkOperationListener } from './observed.js';
