import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Registry, collectDefaultMetrics, type Metric } from 'prom-client';
import type { ZkPlan } from '../zk-plan.js';
import type { ZkPlanEvents } from '../worker/worker-events.js';
import type { ZkSession } from '../zk/zk-client-types.js';
import type { ObservedZkPlan, ZkOperationListener } from './observed.js';
import { fnLabeller } from './metric-labels.js';
import { TaskWaitMeter } from './task-wait.js';
import {
  defineWorkerMetrics,
  metricName,
  metricsOf,
  type WorkerMetricSet,
} from './worker-metric-definitions.js';
import { DEFAULTS } from '../config/defaults.js';

/** Options of createWorkerMetrics: whether to add prom-client's default metrics, and whether to measure how long claimed tasks waited. */
export interface WorkerMetricsOptions {
  /** Also register prom-client's default metrics (`process_*`, `nodejs_*`) in the registry. @defaultValue false */
  readonly defaultMetrics?: boolean;
  /**
   * Measure `zk_plan_task_wait_seconds`: costs two `exists` reads per claimed task (three for the
   * first task of a plan), on the ZkPlan's session. @defaultValue true
   */
  readonly taskWait?: boolean;
}

/** The metrics createWorkerMetrics keeps up to date: their registry, and `stop()` to remove them. */
export interface WorkerMetrics {
  /** The registry holding the metrics (the one given, or a new one). */
  readonly registry: Registry;
  /** Stops listening and removes this module's metrics (and the default metrics it added) from the registry. Idempotent. */
  stop(): void;
}

/**
 * Prometheus metrics of a ZkPlan's workers, job workers and ZooKeeper session, kept up to date from
 * its events (`task:*`, `worker:*`, `job:*`), its client's events and state, and the client's
 * per-operation hook.
 * Every metric is named `zk_plan_…`; see the help texts in worker-metric-definitions.ts or docs/guide/metrics-and-logs.md. A registry is given
 * to one ZkPlan at a time: two would register the same names (an error).
 */
export function createWorkerMetrics(
  zkPlan: ZkPlan | ObservedZkPlan,
  registry: Registry = new Registry(),
  options: WorkerMetricsOptions = {},
): WorkerMetrics {
  const plan: ObservedZkPlan = zkPlan;
  const zk = plan.zk;
  /** The task each worker loop holds: a loop runs one task at a time, so a new claim or an idle round ends the previous one. */
  const running = new Map<string, string>();
  /** The items this process's job workers hold, by parent, job, item and worker: a stop counts only after its start. */
  const heldItems = new Set<string>();

  const metrics = defineWorkerMetrics({ zk, running });
  const ours = metricsOf(metrics);
  registerOurs(registry, ours);
  // Both series of each outcome are shown from the start, so a rate over them has a zero to start from.
  for (const final of ['true', 'false'])
    for (const charged of ['true', 'false']) metrics.tasksFailed.inc({ final, charged }, 0);
  const defaultMetricNames =
    options.defaultMetrics === true ? addDefaultMetrics(registry, ours) : [];

  let stopped = false;
  const wait = new TaskWaitMeter(zk, metrics.taskWait, () => stopped);
  const measureWait = (task: string, taskPlan: string): void => {
    if (options.taskWait !== false) void wait.measure(task, taskPlan).catch(() => undefined);
  };
  const onSessionStarted = (session: ZkSession): void => {
    if (session.generation > 1) metrics.sessionReconnects.inc();
  };

  const previousHook = zk.onOperation;
  const hook: ZkOperationListener = (op, ms, ok) => {
    if (!stopped) metrics.zkOperation.observe({ op }, ms / 1000);
    previousHook?.(op, ms, ok);
  };
  zk.onOperation = hook;

  const unsubscribe: (() => void)[] = [];
  const listen: Listen = (event, listener) => {
    plan.on(event, listener);
    unsubscribe.push(() => plan.off(event, listener));
  };
  listenToTasks(listen, metrics, running, fnLabeller(plan.functions), measureWait);
  listenToWorkerLoops(listen, metrics, running);
  listenToJobs(listen, metrics, heldItems);
  zk.on('session:started', onSessionStarted);

  return {
    registry,
    stop() {
      if (stopped) return;
      stopped = true;
      for (const off of unsubscribe.splice(0)) off();
      zk.off('session:started', onSessionStarted);
      // Hooks set after ours call ours through; then ours stays, as a pass-through.
      if (zk.onOperation === hook) zk.onOperation = previousHook;
      for (const metric of [...ours.map(metricName), ...defaultMetricNames])
        registry.removeSingleMetric(metric);
      running.clear();
      wait.clear();
      heldItems.clear();
    },
  };
}

/** Registers our metrics, or none of them when the registry has one of their names already. */
function registerOurs(registry: Registry, ours: readonly Metric[]): void {
  const taken = ours
    .map(metricName)
    .filter((metric) => registry.getSingleMetric(metric) !== undefined);
  if (taken.length > 0)
    throw new Error(
      `The registry already has metrics named ${taken.join(', ')}: one registry per ZkPlan, or stop() the previous metrics first`,
    );
  for (const metric of ours) registry.registerMetric(metric);
}

/**
 * Adds prom-client's default metrics to the registry and returns their names, for stop() to
 * remove. When that fails, removes ours too and throws, leaving the registry as it was.
 */
function addDefaultMetrics(registry: Registry, ours: readonly Metric[]): string[] {
  const before = new Set(registry.getMetricsAsArray().map((metric) => metric.name));
  try {
    collectDefaultMetrics({ register: registry });
  } catch (error) {
    // e.g. the registry has them already: leave it as it was
    for (const metric of registry.getMetricsAsArray().map((entry) => entry.name))
      if (!before.has(metric) || ours.some((own) => metricName(own) === metric))
        registry.removeSingleMetric(metric);
    throw error;
  }
  return registry
    .getMetricsAsArray()
    .map((metric) => metric.name)
    .filter((metric) => !before.has(metric));
}

/** Listens to one of the ZkPlan's events until the metrics stop. */
type Listen = <K extends keyof ZkPlanEvents>(
  event: K,
  listener: (...args: ZkPlanEvents[K]) => void,
) => void;

/** Tasks claimed, completed and failed: their counts and durations, the tasks held, and how long they waited. */
function listenToTasks(
  listen: Listen,
  metrics: WorkerMetricSet,
  running: Map<string, string>,
  fnLabel: (fn: string | undefined) => { fn?: string },
  measureWait: (task: string, taskPlan: string) => void,
): void {
  const onClaimed = ({ task, plan: taskPlan, workerId }: ZkPlanEvents['task:claimed'][0]): void => {
    metrics.tasksStarted.inc();
    running.set(workerId, task);
    measureWait(task, taskPlan);
  };
  const onCompleted = ({
    task,
    workerId,
    durationMs,
    fn,
    skipped,
  }: ZkPlanEvents['task:completed'][0]): void => {
    if (skipped === undefined) metrics.tasksSucceeded.inc(fnLabel(fn));
    else metrics.tasksSkipped.inc(fnLabel(fn));
    metrics.taskDuration.observe(fnLabel(fn), durationMs / 1000);
    if (running.get(workerId) === task) running.delete(workerId);
  };
  const onContinued = ({ task, workerId, fn }: ZkPlanEvents['task:continued'][0]): void => {
    metrics.tasksHandedOver.inc(fnLabel(fn));
    if (running.get(workerId) === task) running.delete(workerId); // given back: the loop holds it no more
  };
  const onFailed = ({
    task,
    workerId,
    final,
    charged,
    fn,
  }: ZkPlanEvents['task:failed'][0]): void => {
    metrics.tasksFailed.inc({ final: String(final), charged: String(charged), ...fnLabel(fn) });
    if (charged && !final) metrics.tasksRetried.inc();
    if (running.get(workerId) === task) running.delete(workerId);
  };
  listen('task:claimed', onClaimed);
  listen('task:completed', onCompleted);
  listen('task:continued', onContinued);
  listen('task:spawned', ({ count, fn }: ZkPlanEvents['task:spawned'][0]) =>
    metrics.tasksSpawned.inc(fnLabel(fn), count),
  );
  listen('task:failed', onFailed);
}

/** Worker loops' idle rounds and errors outside any task. */
function listenToWorkerLoops(
  listen: Listen,
  metrics: WorkerMetricSet,
  running: Map<string, string>,
): void {
  const onIdle = ({ workerId }: ZkPlanEvents['worker:idle'][0]): void => {
    metrics.idleRounds.inc();
    running.delete(workerId); // a loop idles only between tasks (a claim that ended without an event: task gone, not runnable)
  };
  const onWorkerError = (): void => {
    metrics.workerErrors.inc();
  };
  listen('worker:idle', onIdle);
  listen('worker:error', onWorkerError);
}

/** Job workers' items held and failed over, their leases' renewals, and the manager's rebalances. */
function listenToJobs(listen: Listen, metrics: WorkerMetricSet, heldItems: Set<string>): void {
  const onJobItem = ({
    jobs,
    job,
    item,
    workerId,
    state,
    failover,
  }: ZkPlanEvents['job:item'][0]): void => {
    const key = `${jobs}\u0000${job}\u0000${item}\u0000${workerId}`;
    if (state === 'started') {
      if (failover === true) metrics.jobFailovers.inc();
      if (heldItems.has(key)) return;
      heldItems.add(key);
      metrics.jobItemsHeld.inc({ job });
    } else if (heldItems.delete(key)) metrics.jobItemsHeld.dec({ job });
  };
  const onLeaseRenewed = ({ latencyMs }: ZkPlanEvents['job:lease-renewed'][0]): void => {
    metrics.jobLeaseRenew.observe(Math.max(0, latencyMs) / 1000);
  };
  listen('job:item', onJobItem);
  listen('job:rebalance', () => metrics.jobRebalances.inc());
  listen('job:lease-renewed', onLeaseRenewed);
  listen('job:run', ({ job, cause, state, outcome }) => {
    if (state === 'ended' && outcome !== undefined) metrics.jobRuns.inc({ job, cause, outcome });
  });
  listen('job:misfire', ({ job, handling }) => metrics.jobMisfires.inc({ job, handling }));
}

/** Options of startMetricsServer: where it listens, the registry it serves, and the metrics' own options. */
export interface MetricsServerOptions extends WorkerMetricsOptions {
  /** 0 picks a free port; `url` tells which. */
  readonly port: number;
  /** Interface to listen on. @defaultValue DEFAULTS.listenHost ('127.0.0.1', this machine only) */
  readonly host?: string;
  /** Registry to fill and serve. @defaultValue a new one */
  readonly registry?: Registry;
}

/** A running metrics server (startMetricsServer): the URL Prometheus scrapes, its registry, and `close()`. */
export interface MetricsServer {
  /** Where the metrics are, e.g. `http://127.0.0.1:9464/metrics`. */
  readonly url: string;
  readonly registry: Registry;
  /** Stops the server (open connections included) and the metrics. */
  close(): Promise<void>;
}

/**
 * Serves `createWorkerMetrics(zkPlan)` over HTTP: `GET /metrics` answers the Prometheus text
 * format; other paths 404, other methods on /metrics 405.
 */
export async function startMetricsServer(
  zkPlan: ZkPlan | ObservedZkPlan,
  options: MetricsServerOptions,
): Promise<MetricsServer> {
  const { port, host = DEFAULTS.listenHost } = options;
  if (!Number.isInteger(port) || port < 0 || port > 65_535)
    throw new RangeError(`port: expected an integer from 0 to 65535, got ${String(port)}`);
  const metrics = createWorkerMetrics(zkPlan, options.registry, options);
  const { registry } = metrics;

  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const path = new URL(request.url ?? '/', 'http://localhost').pathname;
    if (path !== '/metrics') {
      response
        .writeHead(404, { 'content-type': 'text/plain; charset=utf-8' })
        .end('Not found: the metrics are at /metrics\n');
      return;
    }
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      response
        .writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain; charset=utf-8' })
        .end('Method not allowed\n');
      return;
    }
    registry.metrics().then(
      (text) => {
        response.writeHead(200, {
          'content-type': registry.contentType,
          'cache-control': 'no-store',
        });
        response.end(request.method === 'HEAD' ? undefined : text);
      },
      (error: unknown) => {
        response
          .writeHead(500, { 'content-type': 'text/plain; charset=utf-8' })
          .end(
            `Collecting the metrics failed: ${error instanceof Error ? error.message : String(error)}\n`,
          );
      },
    );
  });

  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (error) {
    metrics.stop();
    throw error;
  }

  const address = server.address() as AddressInfo;
  const shownHost =
    address.family === 'IPv6' || address.address.includes(':')
      ? `[${address.address}]`
      : address.address;
  let closing: Promise<void> | undefined;
  return {
    url: `http://${shownHost}:${address.port}/metrics`,
    registry,
    close() {
      closing ??= new Promise<void>((resolve, reject) => {
        metrics.stop();
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      });
      return closing;
    },
  };
}
