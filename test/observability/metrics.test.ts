import { EventEmitter } from 'node:events';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import {
  createWorkerMetrics,
  startMetricsServer,
  type WorkerMetrics,
} from '../../src/observability/metrics.js';
import type {
  ObservedZkClient,
  ObservedZkPlan,
  ZkOperationListener,
} from '../../src/observability/observed.js';
import type { ZkPlanEvents } from '../../src/worker/worker-events.js';
import type {
  SessionState,
  ZkClientEvents,
  ZkOperationCounts,
} from '../../src/zk/zk-client-types.js';
import type { ZkStat } from '../../src/zk/native-client.js';

/** Stands in for a ZkClient: events, state, counts, the operation hook, and `exists` answering from a table of ctimes. */
class FakeZk extends EventEmitter<ZkClientEvents> implements ObservedZkClient {
  state: SessionState = 'connected';
  readonly counts: ZkOperationCounts = { reads: 0, writes: 0 };
  onOperation: ZkOperationListener | undefined;
  readonly ctimes = new Map<string, number>();
  readonly existsCalls: string[] = [];

  exists(path: string): Promise<ZkStat | undefined> {
    this.existsCalls.push(path);
    const ctime = this.ctimes.get(path);
    return Promise.resolve(
      ctime === undefined ? undefined : ({ ctime: new Date(ctime) } as ZkStat),
    );
  }

  setState(state: SessionState): void {
    this.state = state;
    this.emit('state', state);
  }
}

/** Stands in for a ZkPlan: the worker events and its client. */
class FakeZkPlan extends EventEmitter<ZkPlanEvents> implements ObservedZkPlan {
  readonly zk = new FakeZk();
  /** The functions its workers register: only these label series. */
  readonly functions = { has: (name: string): boolean => ['load', 'report'].includes(name) };
}

const PLAN = '/plans/plan-0000000001';
const task = (n: number): string => `${PLAN}/task-${String(n).padStart(10, '0')}`;

async function value(
  registry: Registry,
  name: string,
  labels: Record<string, string> = {},
): Promise<number | undefined> {
  const metric = registry.getSingleMetric(name);
  if (metric === undefined) return undefined;
  const { values } = await metric.get();
  const found = values.find(
    (entry) =>
      Object.entries(labels).every(([key, wanted]) => String(entry.labels[key]) === wanted) &&
      Object.keys(entry.labels).length === Object.keys(labels).length,
  );
  return found?.value;
}

async function histogramCount(
  registry: Registry,
  name: string,
  labels: Record<string, string> = {},
): Promise<number | undefined> {
  const metric = registry.getSingleMetric(name);
  if (metric === undefined) return undefined;
  const { values } = await metric.get();
  const found = values.find(
    (entry) =>
      (entry as { metricName?: string }).metricName === `${name}_count` &&
      Object.entries(labels).every(([key, wanted]) => String(entry.labels[key]) === wanted),
  );
  return found?.value;
}

async function histogramSum(registry: Registry, name: string): Promise<number | undefined> {
  const metric = registry.getSingleMetric(name);
  const values = (await metric?.get())?.values ?? [];
  return values.find((entry) => (entry as { metricName?: string }).metricName === `${name}_sum`)
    ?.value;
}

const started: WorkerMetrics[] = [];
function metricsFor(
  plan: FakeZkPlan,
  registry?: Registry,
  options?: Parameters<typeof createWorkerMetrics>[2],
): WorkerMetrics {
  const metrics = createWorkerMetrics(plan, registry, options);
  started.push(metrics);
  return metrics;
}
afterEach(() => {
  for (const metrics of started.splice(0)) metrics.stop();
});

describe('createWorkerMetrics', () => {
  it('counts claims, completions, failures by final/charged, retries, idle rounds and worker errors', async () => {
    const plan = new FakeZkPlan();
    const { registry } = metricsFor(plan, undefined, { taskWait: false });
    const error = new Error('boom');

    plan.emit('task:claimed', { task: task(1), plan: PLAN, workerId: 'w/1' });
    plan.emit('task:completed', {
      task: task(1),
      plan: PLAN,
      workerId: 'w/1',
      durationMs: 1500,
      reusedResult: false,
    });
    plan.emit('task:claimed', { task: task(2), plan: PLAN, workerId: 'w/2' });
    plan.emit('task:failed', {
      task: task(2),
      plan: PLAN,
      workerId: 'w/2',
      error,
      charged: true,
      final: false,
      attempts: 1,
      nextTryAt: new Date(),
    });
    plan.emit('task:claimed', { task: task(2), plan: PLAN, workerId: 'w/1' });
    plan.emit('task:failed', {
      task: task(2),
      plan: PLAN,
      workerId: 'w/1',
      error,
      charged: true,
      final: true,
      attempts: 2,
    });
    plan.emit('task:claimed', { task: task(3), plan: PLAN, workerId: 'w/2' });
    plan.emit('task:failed', {
      task: task(3),
      plan: PLAN,
      workerId: 'w/2',
      error,
      charged: false,
      final: false,
    });
    plan.emit('worker:idle', { workerId: 'w/1', round: 0, sleepMs: 100 });
    plan.emit('worker:idle', { workerId: 'w/1', round: 1, sleepMs: 150 });
    plan.emit('worker:error', { workerId: 'w/2', error });

    expect(await value(registry, 'zk_plan_tasks_started_total')).toBe(4);
    expect(await value(registry, 'zk_plan_tasks_succeeded_total')).toBe(1);
    expect(
      await value(registry, 'zk_plan_tasks_failed_total', { final: 'false', charged: 'true' }),
    ).toBe(1);
    expect(
      await value(registry, 'zk_plan_tasks_failed_total', { final: 'true', charged: 'true' }),
    ).toBe(1);
    expect(
      await value(registry, 'zk_plan_tasks_failed_total', { final: 'false', charged: 'false' }),
    ).toBe(1);
    expect(
      await value(registry, 'zk_plan_tasks_failed_total', { final: 'true', charged: 'false' }),
    ).toBe(0);
    expect(await value(registry, 'zk_plan_tasks_retried_total')).toBe(1);
    expect(await value(registry, 'zk_plan_idle_rounds_total')).toBe(2);
    expect(await value(registry, 'zk_plan_worker_errors_total')).toBe(1);
    expect(await histogramCount(registry, 'zk_plan_task_duration_seconds')).toBe(1);
    expect(await histogramSum(registry, 'zk_plan_task_duration_seconds')).toBe(1.5);
    expect(await value(registry, 'zk_plan_running_tasks')).toBe(0);
  });

  it('labels task outcomes by function (when the worker named it), never by task key, path or plan', async () => {
    const plan = new FakeZkPlan();
    const { registry } = metricsFor(plan, undefined, { taskWait: false });
    const error = new Error('boom');
    plan.emit('task:completed', {
      task: task(1),
      plan: PLAN,
      workerId: 'w/1',
      durationMs: 500,
      reusedResult: false,
      fn: 'load',
    });
    plan.emit('task:completed', {
      task: task(2),
      plan: PLAN,
      workerId: 'w/1',
      durationMs: 700,
      reusedResult: false,
      fn: 'load',
    });
    plan.emit('task:completed', {
      task: task(3),
      plan: PLAN,
      workerId: 'w/1',
      durationMs: 100,
      reusedResult: false,
    });
    plan.emit('task:failed', {
      task: task(4),
      plan: PLAN,
      workerId: 'w/1',
      error,
      charged: true,
      final: true,
      attempts: 1,
      fn: 'report',
    });
    // A function named in a task node that no worker registers (anyone who can write a task picks it): no label value of its own.
    plan.emit('task:failed', {
      task: task(5),
      plan: PLAN,
      workerId: 'w/1',
      error,
      charged: true,
      final: true,
      attempts: 1,
      fn: 'attacker-chosen-1',
    });
    expect(
      await value(registry, 'zk_plan_tasks_failed_total', {
        final: 'true',
        charged: 'true',
        fn: 'attacker-chosen-1',
      }),
    ).toBeUndefined();
    expect(await value(registry, 'zk_plan_tasks_succeeded_total', { fn: 'load' })).toBe(2);
    expect(await value(registry, 'zk_plan_tasks_succeeded_total')).toBe(1); // a function the worker did not name: no fn label
    expect(
      await value(registry, 'zk_plan_tasks_failed_total', {
        final: 'true',
        charged: 'true',
        fn: 'report',
      }),
    ).toBe(1);
    expect(await histogramCount(registry, 'zk_plan_task_duration_seconds', { fn: 'load' })).toBe(2);
    const labels = new Set<string>();
    for (const metric of await registry.getMetricsAsJSON())
      for (const entry of metric.values)
        for (const label of Object.keys(entry.labels)) labels.add(label);
    expect(
      [...labels].filter((label) => ['key', 'task', 'plan', 'planName'].includes(label)),
    ).toEqual([]);
    expect(labels.has('fn')).toBe(true);
  });

  it('running_tasks: claimed minus finished, one task per worker loop; an idle round or a new claim ends a claim that ended silently', async () => {
    const plan = new FakeZkPlan();
    const { registry } = metricsFor(plan, undefined, { taskWait: false });
    plan.emit('task:claimed', { task: task(1), plan: PLAN, workerId: 'w/1' });
    plan.emit('task:claimed', { task: task(2), plan: PLAN, workerId: 'w/2' });
    plan.emit('task:claimed', { task: task(3), plan: PLAN, workerId: 'w/3' });
    expect(await value(registry, 'zk_plan_running_tasks')).toBe(3);
    plan.emit('task:completed', {
      task: task(1),
      plan: PLAN,
      workerId: 'w/1',
      durationMs: 1,
      reusedResult: true,
    });
    expect(await value(registry, 'zk_plan_running_tasks')).toBe(2);
    // w/2's task was gone (no event): its next claim replaces it.
    plan.emit('task:claimed', { task: task(4), plan: PLAN, workerId: 'w/2' });
    expect(await value(registry, 'zk_plan_running_tasks')).toBe(2);
    // w/3's task was not runnable (no event): its idle round ends it.
    plan.emit('worker:idle', { workerId: 'w/3', round: 0, sleepMs: 10 });
    expect(await value(registry, 'zk_plan_running_tasks')).toBe(1);
    // A task that handed over is given back: its loop holds it no more, and the hand-over is counted.
    plan.emit('task:claimed', { task: task(5), plan: PLAN, workerId: 'w/3' });
    expect(await value(registry, 'zk_plan_running_tasks')).toBe(2);
    plan.emit('task:continued', {
      task: task(5),
      plan: PLAN,
      workerId: 'w/3',
      durationMs: 1,
      continuation: task(6),
    });
    expect(await value(registry, 'zk_plan_running_tasks')).toBe(1);
    expect(await value(registry, 'zk_plan_tasks_handed_over_total')).toBe(1);
    // The tasks its try spawned and handed over to are counted; a skip is not a success.
    plan.emit('task:spawned', { task: task(5), plan: PLAN, workerId: 'w/3', count: 4 });
    expect(await value(registry, 'zk_plan_tasks_spawned_total')).toBe(4);
    const succeededBefore = await value(registry, 'zk_plan_tasks_succeeded_total');
    plan.emit('task:claimed', { task: task(7), plan: PLAN, workerId: 'w/3' });
    plan.emit('task:completed', {
      task: task(7),
      plan: PLAN,
      workerId: 'w/3',
      durationMs: 1,
      reusedResult: false,
      skipped: 'no rows today',
    });
    expect(await value(registry, 'zk_plan_tasks_skipped_total')).toBe(1);
    expect(await value(registry, 'zk_plan_tasks_succeeded_total')).toBe(succeededBefore);
    expect(await value(registry, 'zk_plan_running_tasks')).toBe(1);
    // A late event about an older task does not end the current one.
    plan.emit('task:failed', {
      task: task(2),
      plan: PLAN,
      workerId: 'w/2',
      error: new Error('x'),
      charged: false,
      final: false,
    });
    expect(await value(registry, 'zk_plan_running_tasks')).toBe(1);
    plan.emit('task:failed', {
      task: task(4),
      plan: PLAN,
      workerId: 'w/2',
      error: new Error('x'),
      charged: true,
      final: true,
      attempts: 3,
    });
    expect(await value(registry, 'zk_plan_running_tasks')).toBe(0);
  });

  it('job metrics: items held per job, rebalances written, lease renewal latency, failovers', async () => {
    const plan = new FakeZkPlan();
    const { registry } = metricsFor(plan, undefined, { taskWait: false });
    const item = (
      job: string,
      id: string,
      workerId: string,
      state: 'started' | 'stopped',
      more: { token?: number; failover?: boolean; reason?: string } = {},
    ): void => {
      plan.emit('job:item', { jobs: '/jobs', job, item: id, workerId, state, ...more });
    };
    item('mail', 'a', 'jw-1', 'started', { token: 5, failover: false });
    item('mail', 'b', 'jw-1', 'started', { token: 6, failover: true });
    item('mail', 'c', 'jw-2', 'started', { token: 7, failover: true });
    item('backup', '0', 'jw-2', 'started', { token: 8, failover: false });
    expect(await value(registry, 'zk_plan_job_items_held', { job: 'mail' })).toBe(3);
    expect(await value(registry, 'zk_plan_job_items_held', { job: 'backup' })).toBe(1);
    item('mail', 'a', 'jw-1', 'stopped', { reason: 'released' });
    item('mail', 'b', 'jw-1', 'stopped', { reason: 'lease-lost' });
    expect(await value(registry, 'zk_plan_job_items_held', { job: 'mail' })).toBe(1);
    // A stop with no start seen (the metrics began after it) and a repeated start change nothing.
    item('mail', 'z', 'jw-3', 'stopped', { reason: 'stopped' });
    item('mail', 'c', 'jw-2', 'started', { token: 7, failover: false });
    expect(await value(registry, 'zk_plan_job_items_held', { job: 'mail' })).toBe(1);
    item('backup', '0', 'jw-2', 'stopped', { reason: 'session-expired' });
    expect(await value(registry, 'zk_plan_job_items_held', { job: 'backup' })).toBe(0);
    expect(await value(registry, 'zk_plan_job_failovers_total')).toBe(2);

    plan.emit('job:rebalance', { jobs: '/jobs', epoch: 1, moved: 0 });
    plan.emit('job:rebalance', { jobs: '/jobs', epoch: 2, moved: 3 });
    expect(await value(registry, 'zk_plan_job_rebalances_total')).toBe(2);

    plan.emit('job:lease-renewed', { jobs: '/jobs', workerId: 'jw-1', latencyMs: 4 });
    plan.emit('job:lease-renewed', { jobs: '/jobs', workerId: 'jw-2', latencyMs: 250 });
    expect(await histogramCount(registry, 'zk_plan_job_lease_renew_seconds')).toBe(2);
    expect(await histogramSum(registry, 'zk_plan_job_lease_renew_seconds')).toBeCloseTo(0.254, 9);
    const text = await registry.metrics();
    expect(text).toMatch(/^# TYPE zk_plan_job_items_held gauge$/m);
    expect(text).toMatch(/^zk_plan_job_lease_renew_seconds_bucket\{le="0.005"\} 1$/m);
    expect(text).toMatch(/^zk_plan_job_lease_renew_seconds_bucket\{le="0.25"\} 2$/m);

    const run = (
      cause: 'tick' | 'retry',
      state: 'started' | 'ended',
      outcome?: 'failed' | 'succeeded',
    ) =>
      plan.emit('job:run', {
        jobs: '/jobs',
        job: 'mail',
        workerId: 'jw-1',
        run: 'run-1',
        cause,
        attempt: 1,
        items: [],
        state,
        ...(outcome === undefined ? {} : { outcome }),
      });
    run('tick', 'started');
    run('tick', 'ended', 'failed');
    run('retry', 'ended', 'succeeded');
    expect(
      await value(registry, 'zk_plan_job_runs_total', {
        job: 'mail',
        cause: 'tick',
        outcome: 'failed',
      }),
    ).toBe(1);
    expect(
      await value(registry, 'zk_plan_job_runs_total', {
        job: 'mail',
        cause: 'retry',
        outcome: 'succeeded',
      }),
    ).toBe(1);
    const misfire = { jobs: '/jobs', job: 'mail', workerId: 'jw-1', tick: new Date(0) };
    plan.emit('job:misfire', { ...misfire, handling: 'caught-up' });
    plan.emit('job:misfire', { ...misfire, handling: 'skipped' });
    plan.emit('job:misfire', { ...misfire, handling: 'skipped' });
    expect(
      await value(registry, 'zk_plan_job_misfires_total', { job: 'mail', handling: 'skipped' }),
    ).toBe(2);
  });

  it('session_state is 1 for the current state only; session_reconnects_total counts sessions after the first', async () => {
    const plan = new FakeZkPlan();
    const { registry } = metricsFor(plan);
    const states = async (): Promise<Record<string, number | undefined>> => ({
      connecting: await value(registry, 'zk_plan_session_state', { state: 'connecting' }),
      connected: await value(registry, 'zk_plan_session_state', { state: 'connected' }),
      suspended: await value(registry, 'zk_plan_session_state', { state: 'suspended' }),
      expired: await value(registry, 'zk_plan_session_state', { state: 'expired' }),
      closed: await value(registry, 'zk_plan_session_state', { state: 'closed' }),
    });
    expect(await states()).toEqual({
      connecting: 0,
      connected: 1,
      suspended: 0,
      expired: 0,
      closed: 0,
    });
    plan.zk.setState('suspended');
    expect(await states()).toEqual({
      connecting: 0,
      connected: 0,
      suspended: 1,
      expired: 0,
      closed: 0,
    });
    plan.zk.setState('expired');
    plan.zk.emit('session:expired', { generation: 1, id: 'a' });
    expect(await value(registry, 'zk_plan_session_reconnects_total')).toBe(0);
    plan.zk.emit('session:started', { generation: 2, id: 'b' });
    plan.zk.setState('connected');
    expect(await value(registry, 'zk_plan_session_reconnects_total')).toBe(1);
    expect(await states()).toEqual({
      connecting: 0,
      connected: 1,
      suspended: 0,
      expired: 0,
      closed: 0,
    });
  });

  it('zookeeper_reads_total / writes_total follow zk.counts at each scrape', async () => {
    const plan = new FakeZkPlan();
    const { registry } = metricsFor(plan);
    plan.zk.counts.reads = 5;
    plan.zk.counts.writes = 3;
    expect(await value(registry, 'zk_plan_zookeeper_reads_total')).toBe(5);
    expect(await value(registry, 'zk_plan_zookeeper_writes_total')).toBe(3);
    plan.zk.counts.reads = 8;
    expect(await value(registry, 'zk_plan_zookeeper_reads_total')).toBe(8);
    expect(await registry.metrics()).toMatch(/^# TYPE zk_plan_zookeeper_reads_total counter$/m);
  });

  it('zookeeper_operation_seconds observes each operation through the hook, keeping a hook set before, and restores it on stop', async () => {
    const plan = new FakeZkPlan();
    const seenBefore: string[] = [];
    const before: ZkOperationListener = (op) => seenBefore.push(op);
    plan.zk.onOperation = before;
    const metrics = metricsFor(plan);
    plan.zk.onOperation?.('create', 2, true);
    plan.zk.onOperation?.('create', 4, false);
    plan.zk.onOperation?.('getData', 1, true);
    expect(
      await histogramCount(metrics.registry, 'zk_plan_zookeeper_operation_seconds', {
        op: 'create',
      }),
    ).toBe(2);
    expect(
      await histogramCount(metrics.registry, 'zk_plan_zookeeper_operation_seconds', {
        op: 'getData',
      }),
    ).toBe(1);
    expect(seenBefore).toEqual(['create', 'create', 'getData']);
    metrics.stop();
    expect(plan.zk.onOperation).toBe(before);
  });

  it('task_wait_seconds: owner ctime minus the later of the runnable entry and the plan ready ctimes', async () => {
    const plan = new FakeZkPlan();
    const { registry } = metricsFor(plan);
    const { zk } = plan;
    zk.ctimes.set(`${PLAN}/ready`, 10_000);
    zk.ctimes.set(`${PLAN}/runnable/task-0000000001`, 9_000); // runnable entry from before the plan was ready
    zk.ctimes.set(`${task(1)}/owner`, 10_250);
    zk.ctimes.set(`${PLAN}/runnable/task-0000000002`, 12_000);
    zk.ctimes.set(`${task(2)}/owner`, 12_500);
    plan.emit('task:claimed', { task: task(1), plan: PLAN, workerId: 'w/1' });
    plan.emit('task:claimed', { task: task(2), plan: PLAN, workerId: 'w/2' });
    plan.emit('task:claimed', { task: task(3), plan: PLAN, workerId: 'w/3' }); // no index entry: not observed
    await new Promise((resolve) => setImmediate(resolve));
    expect(await histogramCount(registry, 'zk_plan_task_wait_seconds')).toBe(2);
    expect(await histogramSum(registry, 'zk_plan_task_wait_seconds')).toBeCloseTo(0.75, 9);
    // Once known, the plan's ready time is remembered.
    plan.emit('task:claimed', { task: task(2), plan: PLAN, workerId: 'w/2' });
    await new Promise((resolve) => setImmediate(resolve));
    const readyReads = zk.existsCalls.filter((path) => path === `${PLAN}/ready`).length;
    plan.emit('task:claimed', { task: task(2), plan: PLAN, workerId: 'w/2' });
    await new Promise((resolve) => setImmediate(resolve));
    expect(zk.existsCalls.filter((path) => path === `${PLAN}/ready`).length).toBe(readyReads);
  });

  it('taskWait: false sends no reads', async () => {
    const plan = new FakeZkPlan();
    const { registry } = metricsFor(plan, undefined, { taskWait: false });
    plan.emit('task:claimed', { task: task(1), plan: PLAN, workerId: 'w/1' });
    await new Promise((resolve) => setImmediate(resolve));
    expect(plan.zk.existsCalls).toEqual([]);
    expect(await histogramCount(registry, 'zk_plan_task_wait_seconds')).toBe(0);
  });

  it('uses the registry given, refuses one that already has its metrics, and stop() unsubscribes and unregisters', async () => {
    const plan = new FakeZkPlan();
    const registry = new Registry();
    const metrics = metricsFor(plan, registry);
    expect(metrics.registry).toBe(registry);
    expect(() => createWorkerMetrics(new FakeZkPlan(), registry)).toThrow(
      /already has metrics named zk_plan_tasks_started_total/,
    );
    expect(plan.listenerCount('task:claimed')).toBe(1);
    metrics.stop();
    metrics.stop();
    expect(plan.listenerCount('task:claimed')).toBe(0);
    expect(plan.listenerCount('task:failed')).toBe(0);
    expect(plan.listenerCount('job:item')).toBe(0);
    expect(plan.listenerCount('job:rebalance')).toBe(0);
    expect(plan.listenerCount('job:lease-renewed')).toBe(0);
    expect(plan.zk.listenerCount('session:started')).toBe(0);
    expect(registry.getMetricsAsArray()).toEqual([]);
    // Registrable again after stop.
    metricsFor(plan, registry);
    expect(registry.getSingleMetric('zk_plan_tasks_started_total')).toBeDefined();
  });

  it('adds the default process metrics only when asked, and removes them on stop', async () => {
    const plan = new FakeZkPlan();
    const without = metricsFor(plan, undefined, { defaultMetrics: false });
    expect(await without.registry.metrics()).not.toMatch(/process_cpu_user_seconds_total/);
    const registry = new Registry();
    const withDefaults = metricsFor(new FakeZkPlan(), registry, { defaultMetrics: true });
    expect(await registry.metrics()).toMatch(/^process_cpu_user_seconds_total \d/m);
    withDefaults.stop();
    expect(registry.getMetricsAsArray()).toEqual([]);
  });

  it('every metric has the zk_plan_ prefix and a help text', async () => {
    const plan = new FakeZkPlan();
    const { registry } = metricsFor(plan);
    const names = registry.getMetricsAsArray().map((metric) => metric.name);
    expect(names.sort()).toEqual(
      [
        'zk_plan_idle_rounds_total',
        'zk_plan_job_failovers_total',
        'zk_plan_job_items_held',
        'zk_plan_job_lease_renew_seconds',
        'zk_plan_job_misfires_total',
        'zk_plan_job_rebalances_total',
        'zk_plan_job_runs_total',
        'zk_plan_running_tasks',
        'zk_plan_session_reconnects_total',
        'zk_plan_session_state',
        'zk_plan_task_duration_seconds',
        'zk_plan_task_wait_seconds',
        'zk_plan_tasks_failed_total',
        'zk_plan_tasks_handed_over_total',
        'zk_plan_tasks_retried_total',
        'zk_plan_tasks_skipped_total',
        'zk_plan_tasks_spawned_total',
        'zk_plan_tasks_started_total',
        'zk_plan_tasks_succeeded_total',
        'zk_plan_worker_errors_total',
        'zk_plan_zookeeper_operation_seconds',
        'zk_plan_zookeeper_reads_total',
        'zk_plan_zookeeper_writes_total',
      ].sort(),
    );
    for (const metric of registry.getMetricsAsArray())
      expect(metric.help.length).toBeGreaterThan(20);
  });
});

describe('startMetricsServer', () => {
  it('serves GET /metrics in the text format on the port picked, 404 elsewhere, 405 for other methods; close() stops it', async () => {
    const plan = new FakeZkPlan();
    const server = await startMetricsServer(plan, { port: 0 });
    try {
      expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
      expect(server.url).not.toMatch(/:0\/metrics$/);
      plan.emit('task:claimed', { task: task(1), plan: PLAN, workerId: 'w/1' });
      const response = await fetch(server.url);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe(server.registry.contentType);
      const text = await response.text();
      expect(text).toMatch(/^zk_plan_tasks_started_total 1$/m);
      expect(text).toMatch(/^zk_plan_session_state\{state="connected"\} 1$/m);
      expect(text).toMatch(/^# HELP zk_plan_running_tasks /m);

      const withQuery = await fetch(`${server.url}?x=1`);
      expect(withQuery.status).toBe(200);
      await withQuery.text();
      const other = await fetch(server.url.replace('/metrics', '/'));
      expect(other.status).toBe(404);
      await other.text();
      const post = await fetch(server.url, { method: 'POST' });
      expect(post.status).toBe(405);
      await post.text();
    } finally {
      await server.close();
    }
    await expect(fetch(server.url)).rejects.toThrow();
    expect(plan.listenerCount('task:claimed')).toBe(0);
  });

  it('rejects (and stops its metrics) when the port is taken', async () => {
    const plan = new FakeZkPlan();
    const first = await startMetricsServer(plan, { port: 0 });
    try {
      const port = Number(new URL(first.url).port);
      const other = new FakeZkPlan();
      await expect(startMetricsServer(other, { port })).rejects.toThrow(/EADDRINUSE/);
      expect(other.listenerCount('task:claimed')).toBe(0);
      expect(other.zk.onOperation).toBeUndefined();
    } finally {
      await first.close();
    }
  });

  it('refuses a port that is no port', async () => {
    await expect(startMetricsServer(new FakeZkPlan(), { port: -1 })).rejects.toThrow(RangeError);
    await expect(startMetricsServer(new FakeZkPlan(), { port: 1.5 })).rejects.toThrow(RangeError);
  });
});

describe('createWorkerMetrics with default metrics already in the registry', () => {
  it('throws and leaves the registry as it was', async () => {
    const { collectDefaultMetrics } = await import('prom-client');
    const registry = new Registry();
    collectDefaultMetrics({ register: registry });
    const names = registry
      .getMetricsAsArray()
      .map((metric) => metric.name)
      .sort();
    expect(() => createWorkerMetrics(new FakeZkPlan(), registry, { defaultMetrics: true })).toThrow(
      /already been registered/,
    );
    expect(
      registry
        .getMetricsAsArray()
        .map((metric) => metric.name)
        .sort(),
    ).toEqual(names);
  });
});
