import { SHELL_FUNCTION } from '../shell/shell-params.js';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  Counter,
  Gauge,
  Histogram,
  Registry,
  collectDefaultMetrics,
  type Metric,
} from 'prom-client';
import type { ZkPlan } from '../zk-plan.js';
import type { ZkPlanEvents } from '../worker/worker-events.js';
import { OWNER, READY, childPath, runnableEntryFor } from '../zk/layout.js';
import type { SessionState, ZkSession } from '../zk/zk-client.js';
import type { ObservedZkPlan, ZkOperationListener } from './observed.js';

/** Prefix of every metric of this module. */
export const METRIC_PREFIX = 'zk_plan_';

const SESSION_STATES: readonly SessionState[] = [
  'connecting',
  'connected',
  'suspended',
  'expired',
  'closed',
];

/** Tasks last from milliseconds to hours. */
const TASK_DURATION_BUCKETS = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600,
];
const TASK_WAIT_BUCKETS = [
  0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600,
];
const ZK_OPERATION_BUCKETS = [
  0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
];
/** A lease renewal is one versioned set; one that takes longer than a lease's margin loses the item. */
const LEASE_RENEW_BUCKETS = [
  0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
];

/**
 * Series of task outcomes are labelled by function, never by task key or path: a function is one of
 * the worker's registered names (so few), while keys and paths grow with every plan.
 */
const FN_LABEL_HELP =
  'fn: the function, when this worker registers it ("inline" for inline source); absent otherwise (a task of a function this worker lacks). Tasks are never labelled by key or path.';

/**
 * The `fn` label of an event's function, or none (a label left out, not an empty one: a scrape would
 * see the same series twice). Events name the function a task's definition names, which whoever can
 * write a task chooses: only names the worker registers (and the built-in `inline` and `shell`)
 * become label values, so the series stay bounded by the registry whatever the plans hold.
 */
function fnLabeller(
  functions: { has(name: string): boolean } | undefined,
): (fn: string | undefined) => { fn?: string } {
  return (fn) =>
    fn !== undefined && (fn === 'inline' || fn === SHELL_FUNCTION || functions?.has(fn) === true)
      ? { fn }
      : {};
}

/** How many plans' `ready` times are remembered for `task_wait_seconds`. */
const PLAN_READY_CACHE_SIZE = 1_000;

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
 * Every metric is named `zk_plan_…`; see the help texts below or docs/guide/metrics-and-logs.md. A registry is given
 * to one ZkPlan at a time: two would register the same names (an error).
 */
export function createWorkerMetrics(
  zkPlan: ZkPlan | ObservedZkPlan,
  registry: Registry = new Registry(),
  options: WorkerMetricsOptions = {},
): WorkerMetrics {
  const plan: ObservedZkPlan = zkPlan;
  const zk = plan.zk;
  const fnLabel = fnLabeller(plan.functions);
  const name = (suffix: string): string => `${METRIC_PREFIX}${suffix}`;
  /** The task each worker loop holds: a loop runs one task at a time, so a new claim or an idle round ends the previous one. */
  const running = new Map<string, string>();
  /** The items this process's job workers hold, by parent, job, item and worker: a stop counts only after its start. */
  const heldItems = new Set<string>();

  const tasksStarted = new Counter({
    name: name('tasks_started_total'),
    help: "Tasks claimed by a worker of this process (task:claimed): the worker created the task's owner node and runs it, or hands on a result a previous owner stored.",
    registers: [],
  });
  const tasksSucceeded = new Counter({
    name: name('tasks_succeeded_total'),
    help: `Tasks completed by a worker of this process (task:completed): result stored, handed to the dependents, task deleted. Includes results a previous owner had stored (reusedResult). ${FN_LABEL_HELP}`,
    labelNames: ['fn'] as const,
    registers: [],
  });
  const tasksFailed = new Counter({
    name: name('tasks_failed_total'),
    help: `Failed tries of tasks run by this process (task:failed). final="true": the task failed for good; charged="true": the failure counts against the task's attempts (charged="false": infrastructure fault or aborted by the worker, not the task's fault). ${FN_LABEL_HELP}`,
    labelNames: ['final', 'charged', 'fn'] as const,
    registers: [],
  });
  const tasksRetried = new Counter({
    name: name('tasks_retried_total'),
    help: 'Charged, non-final failures seen by this process: each one schedules another try of the task (after its retry delay).',
    registers: [],
  });
  const idleRounds = new Counter({
    name: name('idle_rounds_total'),
    help: 'Rounds in which a worker loop of this process found nothing to do and slept (worker:idle).',
    registers: [],
  });
  const workerErrors = new Counter({
    name: name('worker_errors_total'),
    help: 'Problems worker loops of this process hit outside any task (worker:error): ZooKeeper unreachable, a malformed node, a release that failed; the loop carried on.',
    registers: [],
  });
  const sessionReconnects = new Counter({
    name: name('session_reconnects_total'),
    help: 'New ZooKeeper sessions the client opened by itself after its session expired.',
    registers: [],
  });
  const taskDuration = new Histogram({
    name: name('task_duration_seconds'),
    help: `Time from the claim of a task to its completion (task:completed durationMs): reading the inputs, running the function, storing the result, handing it on and deleting the task. ${FN_LABEL_HELP}`,
    labelNames: ['fn'] as const,
    buckets: TASK_DURATION_BUCKETS,
    registers: [],
  });
  const taskWait = new Histogram({
    name: name('task_wait_seconds'),
    help:
      "Time a task waited between becoming runnable and being claimed by this process, on ZooKeeper's clock: ctime of the task's owner node minus the later of the ctimes of the plan's ready node and of the task's entry in the plan's runnable index (created when the task was added without inputs, when its last input arrived, or when its retry delay ended). " +
      'Read with exists() right after the claim; not observed when the entry is missing (plans written by other tools, a claim of a task that turned out not runnable).',
    buckets: TASK_WAIT_BUCKETS,
    registers: [],
  });
  const zkOperation = new Histogram({
    name: name('zookeeper_operation_seconds'),
    help: "Round trip of each ZooKeeper operation this process sent on the ZkPlan's session, by op (create, delete, exists, getData, getChildren, setData, …), answered OK or with an error.",
    labelNames: ['op'] as const,
    buckets: ZK_OPERATION_BUCKETS,
    registers: [],
  });
  const runningTasks = new Gauge({
    name: name('running_tasks'),
    help: 'Tasks the worker loops of this process hold right now: claimed and not yet completed, failed or given up.',
    registers: [],
    collect() {
      this.set(running.size);
    },
  });
  const sessionState = new Gauge({
    name: name('session_state'),
    help: 'State of the ZooKeeper client: 1 for the current state, 0 for the others (connecting, connected, suspended = disconnected with the session maybe alive, expired, closed).',
    labelNames: ['state'] as const,
    registers: [],
    collect() {
      const current = zk.state;
      for (const state of SESSION_STATES) this.set({ state }, state === current ? 1 : 0);
    },
  });
  const zkReads = new Counter({
    name: name('zookeeper_reads_total'),
    help: 'Read operations (exists, getData, getChildren, getAcl) sent to ZooKeeper by this client, resends included.',
    registers: [],
    collect() {
      this.reset();
      this.inc(zk.counts.reads);
    },
  });
  const zkWrites = new Counter({
    name: name('zookeeper_writes_total'),
    help: 'Write operations (create, setData, delete, setAcl) sent to ZooKeeper by this client, resends included.',
    registers: [],
    collect() {
      this.reset();
      this.inc(zk.counts.writes);
    },
  });

  const jobItemsHeld = new Gauge({
    name: name('job_items_held'),
    help: 'Work items of each job the job workers of this process hold right now (job:item): started (lease taken) and not yet stopped (released, lost, run out, session expired).',
    labelNames: ['job'] as const,
    registers: [],
  });
  const jobRebalances = new Counter({
    name: name('job_rebalances_total'),
    help: 'Job assignments written by this process as the manager of a jobs parent (job:rebalance): each a new epoch, after a job, its pool or the live job workers changed.',
    registers: [],
  });
  const jobLeaseRenew = new Histogram({
    name: name('job_lease_renew_seconds'),
    help: "Time from sending a renewal of an item's lease to its answer, for the job workers of this process (job:lease-renewed).",
    buckets: LEASE_RENEW_BUCKETS,
    registers: [],
  });
  const jobFailovers = new Counter({
    name: name('job_failovers_total'),
    help: "Items a job worker of this process started after their previous holder's lease ran out instead of being released (job:item failover): the holder died, froze or was cut off.",
    registers: [],
  });

  const ours: Metric[] = [
    tasksStarted,
    tasksSucceeded,
    tasksFailed,
    tasksRetried,
    idleRounds,
    workerErrors,
    sessionReconnects,
    taskDuration,
    taskWait,
    zkOperation,
    runningTasks,
    sessionState,
    zkReads,
    zkWrites,
    jobItemsHeld,
    jobRebalances,
    jobLeaseRenew,
    jobFailovers,
  ];
  const taken = ours
    .map(metricName)
    .filter((metric) => registry.getSingleMetric(metric) !== undefined);
  if (taken.length > 0)
    throw new Error(
      `The registry already has metrics named ${taken.join(', ')}: one registry per ZkPlan, or stop() the previous metrics first`,
    );
  for (const metric of ours) registry.registerMetric(metric);
  for (const final of ['true', 'false'])
    for (const charged of ['true', 'false']) tasksFailed.inc({ final, charged }, 0);

  let defaultMetricNames: string[] = [];
  if (options.defaultMetrics === true) {
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
    defaultMetricNames = registry
      .getMetricsAsArray()
      .map((metric) => metric.name)
      .filter((metric) => !before.has(metric));
  }

  let stopped = false;
  const planReady = new Map<string, Date>();
  const measureWait = async (task: string, taskPlan: string): Promise<void> => {
    const exists = zk.exists?.bind(zk);
    if (exists === undefined) return;
    // Sent on the claiming session right after the claim, so before the worker can delete these nodes.
    const knownReady = planReady.get(taskPlan);
    const [owner, entry, ready] = await Promise.all([
      exists(childPath(task, OWNER)),
      exists(runnableEntryFor(task)),
      knownReady === undefined
        ? exists(childPath(taskPlan, READY)).then((stat) => stat?.ctime)
        : knownReady,
    ]);
    if (stopped || owner === undefined || entry === undefined || ready === undefined) return;
    if (knownReady === undefined) {
      planReady.set(taskPlan, ready);
      if (planReady.size > PLAN_READY_CACHE_SIZE)
        planReady.delete(planReady.keys().next().value as string);
    }
    const runnableSince = Math.max(entry.ctime.getTime(), ready.getTime());
    taskWait.observe(Math.max(0, owner.ctime.getTime() - runnableSince) / 1000);
  };

  const onClaimed = ({ task, plan: taskPlan, workerId }: ZkPlanEvents['task:claimed'][0]): void => {
    tasksStarted.inc();
    running.set(workerId, task);
    if (options.taskWait !== false) void measureWait(task, taskPlan).catch(() => undefined);
  };
  const onCompleted = ({
    task,
    workerId,
    durationMs,
    fn,
  }: ZkPlanEvents['task:completed'][0]): void => {
    tasksSucceeded.inc(fnLabel(fn));
    taskDuration.observe(fnLabel(fn), durationMs / 1000);
    if (running.get(workerId) === task) running.delete(workerId);
  };
  const onFailed = ({
    task,
    workerId,
    final,
    charged,
    fn,
  }: ZkPlanEvents['task:failed'][0]): void => {
    tasksFailed.inc({ final: String(final), charged: String(charged), ...fnLabel(fn) });
    if (charged && !final) tasksRetried.inc();
    if (running.get(workerId) === task) running.delete(workerId);
  };
  const onIdle = ({ workerId }: ZkPlanEvents['worker:idle'][0]): void => {
    idleRounds.inc();
    running.delete(workerId); // a loop idles only between tasks (a claim that ended without an event: task gone, not runnable)
  };
  const onWorkerError = (): void => {
    workerErrors.inc();
  };
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
      if (failover === true) jobFailovers.inc();
      if (heldItems.has(key)) return;
      heldItems.add(key);
      jobItemsHeld.inc({ job });
    } else if (heldItems.delete(key)) jobItemsHeld.dec({ job });
  };
  const onLeaseRenewed = ({ latencyMs }: ZkPlanEvents['job:lease-renewed'][0]): void => {
    jobLeaseRenew.observe(Math.max(0, latencyMs) / 1000);
  };
  const onSessionStarted = (session: ZkSession): void => {
    if (session.generation > 1) sessionReconnects.inc();
  };

  const previousHook = zk.onOperation;
  const hook: ZkOperationListener = (op, ms, ok) => {
    if (!stopped) zkOperation.observe({ op }, ms / 1000);
    previousHook?.(op, ms, ok);
  };
  zk.onOperation = hook;

  const unsubscribe: (() => void)[] = [];
  const listen = <K extends keyof ZkPlanEvents>(
    event: K,
    listener: (...args: ZkPlanEvents[K]) => void,
  ): void => {
    plan.on(event, listener);
    unsubscribe.push(() => plan.off(event, listener));
  };
  listen('task:claimed', onClaimed);
  listen('task:completed', onCompleted);
  listen('task:failed', onFailed);
  listen('worker:idle', onIdle);
  listen('worker:error', onWorkerError);
  listen('job:item', onJobItem);
  listen('job:rebalance', () => jobRebalances.inc());
  listen('job:lease-renewed', onLeaseRenewed);
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
      planReady.clear();
      heldItems.clear();
    },
  };
}

/** Options of startMetricsServer: where it listens, the registry it serves, and the metrics' own options. */
export interface MetricsServerOptions extends WorkerMetricsOptions {
  /** 0 picks a free port; `url` tells which. */
  readonly port: number;
  /** Interface to listen on. @defaultValue '127.0.0.1' (this machine only) */
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
  const { port, host = '127.0.0.1' } = options;
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

function metricName(metric: Metric): string {
  return (metric as unknown as { name: string }).name;
}
