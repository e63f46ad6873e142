import { describe, expect, it } from 'vitest';
import { FunctionRegistry, call, type ZkPlanEvents } from '../src/index.js';
import { createLogger, logWorkerEvents } from '../src/observability/logger.js';
import { startMetricsServer, type MetricsServer } from '../src/observability/metrics.js';
import { expireSession } from '../src/testing/expire-session.js';
import { TIMING, nextEvent, useZooKeeper } from './support/zk-test-env.js';

const env = useZooKeeper('observability');

/** One sample of the text format: `name{a="x",b="y"} value`. */
interface Sample {
  readonly name: string;
  readonly labels: Record<string, string>;
  readonly value: number;
}

async function scrape(server: MetricsServer): Promise<Sample[]> {
  const response = await fetch(server.url);
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  const samples: Sample[] = [];
  for (const line of (await response.text()).split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (match === null) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const pair of (match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g))
      labels[pair[1] as string] = pair[2] as string;
    samples.push({ name: match[1] as string, labels, value: Number(match[3]) });
  }
  return samples;
}

/** The value of the one sample with that name and (at least) those labels. */
function sample(
  samples: readonly Sample[],
  name: string,
  labels: Record<string, string> = {},
): number {
  const found = samples.filter(
    (entry) =>
      entry.name === name &&
      Object.entries(labels).every(([key, value]) => entry.labels[key] === value),
  );
  if (found.length !== 1)
    throw new Error(`expected one sample ${name}${JSON.stringify(labels)}, found ${found.length}`);
  return (found[0] as Sample).value;
}

describe('metrics server on a real ZooKeeper', () => {
  it('counts a plan with a task that fails once then succeeds, exactly', async () => {
    let flakyCalls = 0;
    const functions = new FunctionRegistry()
      .register('constant', (ctx) => ctx.params[0])
      .register('flaky', (_ctx, input: number) => {
        flakyCalls += 1;
        if (flakyCalls === 1) throw new Error('first try fails');
        return input * 10;
      })
      .register('sum', (_ctx, ...inputs: number[]) => inputs.reduce((a, b) => a + b, 0));
    const zkPlan = await env.zkPlan({ functions });
    const parent = env.root();
    const server = await startMetricsServer(zkPlan, { port: 0 });
    const lines: Record<string, unknown>[] = [];
    const stopLogging = logWorkerEvents(
      zkPlan,
      createLogger({
        pretty: false,
        level: 'debug',
        destination: {
          write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>),
        },
      }),
    );
    try {
      expect(new URL(server.url).hostname).toBe('127.0.0.1');
      const claims: ZkPlanEvents['task:claimed'][0][] = [];
      let idleRounds = 0;
      zkPlan.on('task:claimed', (event) => claims.push(event));
      zkPlan.on('worker:idle', () => (idleRounds += 1));

      const plan = await zkPlan.createPlan(parent, { maxAttempts: 3, initialDelayMs: 10 });
      const one = await zkPlan.addTask(plan, call('constant', 1));
      const two = await zkPlan.addTask(plan, call('constant', 2));
      const three = await zkPlan.addTask(plan, call('constant', 3));
      const flaky = await zkPlan.addTask(plan, call('flaky'), [three]);
      const total = await zkPlan.addTask(plan, call('sum'), [one, two, flaky], {
        keepResult: true,
      });
      await zkPlan.markAsReady(plan);

      const pool = zkPlan.startWorkers(parent, { count: 2, backoff: { initial: 10, max: 100 } });
      await zkPlan.waitForCompletion(plan, { timeoutMs: 20_000 * TIMING });
      await pool.stop();
      expect(await zkPlan.getResult(total)).toBe(33);
      expect(flakyCalls).toBe(2);

      const samples = await scrape(server);
      // By function (the worker registers all three); a try that failed is counted under its function too.
      expect(sample(samples, 'zk_plan_tasks_succeeded_total', { fn: 'constant' })).toBe(3);
      expect(sample(samples, 'zk_plan_tasks_succeeded_total', { fn: 'flaky' })).toBe(1);
      expect(sample(samples, 'zk_plan_tasks_succeeded_total', { fn: 'sum' })).toBe(1);
      expect(
        sample(samples, 'zk_plan_tasks_failed_total', {
          final: 'false',
          charged: 'true',
          fn: 'flaky',
        }),
      ).toBe(1);
      expect(
        samples.filter(
          (entry) =>
            entry.name === 'zk_plan_tasks_failed_total' &&
            entry.labels['final'] === 'false' &&
            entry.labels['charged'] === 'true',
        ),
      ).toHaveLength(2);
      expect(
        sample(samples, 'zk_plan_tasks_failed_total', { final: 'true', charged: 'true' }),
      ).toBe(0);
      expect(
        sample(samples, 'zk_plan_tasks_failed_total', { final: 'false', charged: 'false' }),
      ).toBe(0);
      expect(
        sample(samples, 'zk_plan_tasks_failed_total', { final: 'true', charged: 'false' }),
      ).toBe(0);
      expect(sample(samples, 'zk_plan_tasks_retried_total')).toBe(1);
      // Every claim is counted: 5 tasks, one of them twice (a claim may also end without running, e.g. a task already gone).
      expect(sample(samples, 'zk_plan_tasks_started_total')).toBe(claims.length);
      expect(claims.length).toBeGreaterThanOrEqual(6);
      expect(sample(samples, 'zk_plan_idle_rounds_total')).toBe(idleRounds);
      expect(sample(samples, 'zk_plan_worker_errors_total')).toBe(0);
      expect(sample(samples, 'zk_plan_running_tasks')).toBe(0);
      expect(sample(samples, 'zk_plan_session_reconnects_total')).toBe(0);

      expect(sample(samples, 'zk_plan_task_duration_seconds_count', { fn: 'constant' })).toBe(3);
      expect(
        sample(samples, 'zk_plan_task_duration_seconds_bucket', { le: '+Inf', fn: 'constant' }),
      ).toBe(3);
      expect(sample(samples, 'zk_plan_task_duration_seconds_sum', { fn: 'sum' })).toBeGreaterThan(
        0,
      );
      // Measured for every claim of a task in the plan's runnable index: all of them here.
      expect(sample(samples, 'zk_plan_task_wait_seconds_count')).toBe(claims.length);
      expect(sample(samples, 'zk_plan_task_wait_seconds_sum')).toBeGreaterThanOrEqual(0);
      // The retried task waited its retry delay in no index: its wait counts from its new entry, so every wait is short.
      expect(sample(samples, 'zk_plan_task_wait_seconds_bucket', { le: '5' })).toBe(claims.length);

      expect(sample(samples, 'zk_plan_session_state', { state: 'connected' })).toBe(1);
      for (const state of ['connecting', 'suspended', 'expired', 'closed'])
        expect(sample(samples, 'zk_plan_session_state', { state })).toBe(0);

      expect(
        sample(samples, 'zk_plan_zookeeper_operation_seconds_count', { op: 'create' }),
      ).toBeGreaterThan(0);
      expect(
        sample(samples, 'zk_plan_zookeeper_operation_seconds_count', { op: 'getChildren' }),
      ).toBeGreaterThan(0);
      expect(
        sample(samples, 'zk_plan_zookeeper_operation_seconds_count', { op: 'delete' }),
      ).toBeGreaterThan(0);
      const reads = sample(samples, 'zk_plan_zookeeper_reads_total');
      const writes = sample(samples, 'zk_plan_zookeeper_writes_total');
      expect(reads).toBeGreaterThan(0);
      expect(writes).toBeGreaterThan(0);
      expect(reads).toBeLessThanOrEqual(zkPlan.zk.counts.reads);
      expect(writes).toBeLessThanOrEqual(zkPlan.zk.counts.writes);
      // Operations sent after the server started all went through the hook.
      const timedOps = samples
        .filter((entry) => entry.name === 'zk_plan_zookeeper_operation_seconds_count')
        .reduce((sum, entry) => sum + entry.value, 0);
      expect(timedOps).toBeGreaterThan(0);
      expect(timedOps).toBeLessThanOrEqual(reads + writes);

      // The log lines tell the same story.
      const byEvent = (event: string): Record<string, unknown>[] =>
        lines.filter((line) => line['event'] === event);
      expect(byEvent('task:completed')).toHaveLength(5);
      expect(byEvent('task:failed')).toEqual([
        expect.objectContaining({
          level: 40,
          plan,
          task: flaky,
          attempt: 1,
          charged: true,
          final: false,
          error: expect.objectContaining({ message: expect.stringContaining('first try fails') }),
        }),
      ]);
      expect(byEvent('task:claimed')).toHaveLength(claims.length);
      for (const line of byEvent('task:completed'))
        expect(line).toMatchObject({
          plan,
          workerId: expect.stringMatching(/\/[12]$/),
          durationMs: expect.any(Number),
        });
    } finally {
      stopLogging();
      await server.close();
    }
  });

  it('follows the session through an expiry: reconnects counted, state back to connected', async () => {
    // A short session timeout makes the client notice the expiry well within expireSession's patience.
    const zkPlan = await env.zkPlan({ sessionTimeoutMs: 4_000 });
    const server = await startMetricsServer(zkPlan, { port: 0 });
    try {
      const restarted = nextEvent<{ generation: number }>(
        zkPlan.zk,
        'session:started',
        (session) => session.generation === 2,
        20_000 * TIMING,
      );
      restarted.catch(() => undefined); // awaited below; no unhandled rejection if expireSession throws first
      await expireSession(zkPlan.zk);
      await restarted;
      expect(zkPlan.zk.state).toBe('connected'); // set before session:started is emitted
      const samples = await scrape(server);
      expect(sample(samples, 'zk_plan_session_reconnects_total')).toBe(1);
      expect(sample(samples, 'zk_plan_session_state', { state: 'connected' })).toBe(1);
      expect(sample(samples, 'zk_plan_session_state', { state: 'expired' })).toBe(0);
    } finally {
      await server.close();
    }
  });
});
