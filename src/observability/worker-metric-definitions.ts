/**
 * The Prometheus metrics of a worker process (createWorkerMetrics in metrics.ts): their names,
 * help texts, labels and buckets. The metrics read at scrape time (running tasks, session state,
 * operation counts) read the sources given here; the others are fed by the event listeners in
 * metrics.ts.
 */
import { Counter, Gauge, Histogram, type Metric } from 'prom-client';
import type { SessionState } from '../zk/zk-client-types.js';
import { FN_LABEL_HELP } from './metric-labels.js';
import type { ObservedZkClient } from './observed.js';

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

/** What the metrics read when they are scraped. */
export interface MetricSources {
  /** The client whose state and operation counts are reported. */
  readonly zk: ObservedZkClient;
  /** The task each worker loop holds (by worker id): their number is `running_tasks`. */
  readonly running: ReadonlyMap<string, string>;
}

/** Creates the metrics, registered nowhere yet: createWorkerMetrics registers them all at once. */
export function defineWorkerMetrics({ zk, running }: MetricSources) {
  const name = (suffix: string): string => `${METRIC_PREFIX}${suffix}`;
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
  const tasksSkipped = new Counter({
    name: name('tasks_skipped_total'),
    help: `Tasks completed as skipped by a worker of this process (task:completed with skipped): their function returned skip(reason), or their trigger rule skipped them without running them. Not counted in tasks_succeeded_total. ${FN_LABEL_HELP}`,
    labelNames: ['fn'] as const,
    registers: [],
  });
  const tasksSpawned = new Counter({
    name: name('tasks_spawned_total'),
    help: `Tasks that tasks run by this process spawned (ctx.spawn, a map) or handed over to (ctx.continueWith), counted by the spawning task's function (task:spawned). A run after a crash that gets its earlier run's tasks back counts them again. ${FN_LABEL_HELP}`,
    labelNames: ['fn'] as const,
    registers: [],
  });
  const tasksHandedOver = new Counter({
    name: name('tasks_handed_over_total'),
    help: `Tasks whose function handed over with ctx.continueWith in this process (task:continued): given back to wait for their continuation's result, then completed (and counted in tasks_succeeded_total) by whichever worker finishes them. ${FN_LABEL_HELP}`,
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

  const jobRuns = new Counter({
    name: name('job_runs_total'),
    help: 'Runs of job functions that ended on the job workers of this process (job:run ended), by job, cause (tick, trigger, misfire, failover, retry, continuous) and outcome (succeeded, failed, aborted).',
    labelNames: ['job', 'cause', 'outcome'] as const,
    registers: [],
  });
  const jobMisfires = new Counter({
    name: name('job_misfires_total'),
    help: 'Ticks of timed jobs that came while the previous run of the same share still ran (job:misfire), by job and handling (caught-up: run once right after; skipped).',
    labelNames: ['job', 'handling'] as const,
    registers: [],
  });

  return {
    tasksStarted,
    tasksSucceeded,
    tasksSkipped,
    tasksSpawned,
    tasksHandedOver,
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
    jobRuns,
    jobMisfires,
  };
}

/** The metrics createWorkerMetrics keeps, by what they measure. */
export type WorkerMetricSet = ReturnType<typeof defineWorkerMetrics>;

/** Every metric of the set, in the order the registry lists them (and a scrape shows them). */
export function metricsOf(set: WorkerMetricSet): Metric[] {
  return [
    set.tasksStarted,
    set.tasksSucceeded,
    set.tasksSkipped,
    set.tasksSpawned,
    set.tasksHandedOver,
    set.tasksFailed,
    set.tasksRetried,
    set.idleRounds,
    set.workerErrors,
    set.sessionReconnects,
    set.taskDuration,
    set.taskWait,
    set.zkOperation,
    set.runningTasks,
    set.sessionState,
    set.zkReads,
    set.zkWrites,
    set.jobItemsHeld,
    set.jobRebalances,
    set.jobLeaseRenew,
    set.jobFailovers,
    set.jobRuns,
    set.jobMisfires,
  ];
}

/** A metric's name (prom-client keeps it on the object without declaring it). */
export function metricName(metric: Metric): string {
  return (metric as unknown as { name: string }).name;
}
