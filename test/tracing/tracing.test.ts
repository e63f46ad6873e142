/**
 * zk-plan's spans over the in-memory ZooKeeper, exported to the OpenTelemetry SDK's in-memory
 * exporter: a plan created inside a request span is its child, each try of a task a child of the
 * plan span (through the trace context the plan node stores) with its attributes and status; a
 * forged context is ignored; a schedule's tick is the parent of the plan it makes; a job's run is a
 * span with its job, items, cause and try, and a failed run's error.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { FunctionRegistry } from '../../src/exec/function-registry.js';
import type { TaskContext } from '../../src/exec/task-context.js';
import { call } from '../../src/exec/task-spec.js';
import { PermanentError } from '../../src/errors/task-errors.js';
import { MemoryZooKeeper } from '../../src/testing/index.js';
import { decodeValue } from '../../src/serialization/codec.js';
import { JobRunner } from '../../src/jobs/job-runner.js';
import { resolveJob } from '../../src/jobs/job-definition.js';
import { FAST_BACKOFF, memoryProcess, type MemoryProcess } from '../support/memory-plan.js';
import { installTestTracing, parentIdOf, type TestTracing } from '../support/otel.js';
import { runnerHost } from '../jobs/support/runner-host.js';
import { PLANS, T0, schedulerProcess } from '../schedule/schedule-harness.js';

type Ctx = TaskContext<unknown[]>;

let tracing: TestTracing;
/** Tasks whose `long` function started. */
const started: string[] = [];
const opened: MemoryProcess[] = [];

beforeEach(() => {
  tracing = installTestTracing();
});

afterEach(async () => {
  await Promise.all(opened.splice(0).map((proc) => proc.zkPlan.close()));
  await tracing.shutdown();
  started.length = 0;
});

function functions(): FunctionRegistry {
  return (
    new FunctionRegistry()
      .register('value', (ctx: Ctx) => {
        // A span the function starts is a child of its try's span.
        trace.getTracer('test').startSpan('inside').end();
        return ctx.params[0];
      })
      .register('sum', (_ctx: Ctx, ...inputs: number[]) => inputs.reduce((a, b) => a + b, 0))
      .register('flaky', (ctx: Ctx, ...inputs: number[]) => {
        if (ctx.attempt === 1) throw new Error('flaky: first try fails');
        return inputs.reduce((a, b) => a + b, 0);
      })
      .register('broken', () => {
        throw new PermanentError('broken for good');
      })
      // Runs until its signal aborts, then throws the reason.
      .register('long', (ctx: Ctx) => {
        started.push(ctx.task);
        return new Promise((_resolve, reject) => {
          ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason as Error), {
            once: true,
          });
        });
      })
  );
}

function open(server: MemoryZooKeeper, name: string): MemoryProcess {
  const proc = memoryProcess(server, name, functions());
  opened.push(proc);
  return proc;
}

/** Polls `done` every 10 ms for up to 2 s. */
async function until(done: () => boolean): Promise<void> {
  const deadline = Date.now() + 2_000;
  while (!done()) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

function named(spans: readonly ReadableSpan[], name: string): ReadableSpan[] {
  return spans.filter((span) => span.name === name);
}

function byKey(spans: readonly ReadableSpan[]): Map<string, ReadableSpan[]> {
  const keyed = new Map<string, ReadableSpan[]>();
  for (const span of spans) {
    const key = String(span.attributes['zk_plan.task.key']);
    keyed.set(key, [...(keyed.get(key) ?? []), span]);
  }
  return keyed;
}

describe('tracing a plan', () => {
  it('makes the plan span a child of the request, and each try a child of the plan span, with its attributes and status', async () => {
    const proc = open(new MemoryZooKeeper(), 'p');
    const request = trace.getTracer('test').startSpan('request');
    const plan = await trace.getTracer('test').startActiveSpan('request-scope', async (scope) => {
      const made = await proc.zkPlan.createPlan(PLANS, {
        name: 'nightly',
        initialDelayMs: 1,
      });
      scope.end();
      return made;
    });
    request.end();
    const a = await proc.zkPlan.addTask(plan, call('value', 2), [], { key: 'a' });
    const b = await proc.zkPlan.addTask(plan, call('flaky'), [a], { key: 'b' });
    await proc.zkPlan.addTask(plan, call('sum'), [a, b], { key: 'c', keepResult: true });
    await proc.zkPlan.markAsReady(plan);
    const pool = proc.zkPlan.startWorkers(PLANS, { count: 2, backoff: FAST_BACKOFF });
    await proc.zkPlan.waitForCompletion(plan, { timeoutMs: 5_000 });
    await pool.stop();

    const spans = tracing.spans();
    const [scope] = named(spans, 'request-scope');
    const [planSpan] = named(spans, 'zk_plan.plan');
    expect(planSpan?.kind).toBe(SpanKind.PRODUCER);
    expect(parentIdOf(planSpan!)).toBe(scope?.spanContext().spanId);
    expect(planSpan?.attributes).toMatchObject({
      'zk_plan.plan.path': plan,
      'zk_plan.plan.name': 'nightly',
      'zk_plan.plan.parent': PLANS,
    });
    expect(planSpan?.status.code).toBe(SpanStatusCode.OK);

    // The plan node stores the plan span's context.
    const node = await proc.zk.getData(plan);
    const stored = decodeValue(plan, node.data!) as { trace?: { traceparent: string } };
    expect(stored.trace?.traceparent).toBe(
      `00-${planSpan?.spanContext().traceId}-${planSpan?.spanContext().spanId}-01`,
    );

    const tries = named(spans, 'zk_plan.task');
    for (const span of tries) {
      expect(span.kind).toBe(SpanKind.CONSUMER);
      expect(span.spanContext().traceId).toBe(planSpan?.spanContext().traceId);
      expect(parentIdOf(span)).toBe(planSpan?.spanContext().spanId);
      expect(span.attributes).toMatchObject({
        'zk_plan.plan.path': plan,
        'zk_plan.plan.name': 'nightly',
        'zk_plan.worker.id': expect.stringMatching(/./),
      });
    }
    const keyed = byKey(tries);
    expect([...keyed.keys()].sort()).toEqual(['a', 'b', 'c']);
    expect(keyed.get('a')?.map((span) => span.attributes)).toEqual([
      expect.objectContaining({
        'zk_plan.task.path': a,
        'zk_plan.task.function': 'value',
        'zk_plan.task.attempt': 1,
        'zk_plan.task.outcome': 'completed',
      }),
    ]);
    const [failedTry, secondTry] = [...(keyed.get('b') ?? [])].sort(
      (x, y) =>
        Number(x.attributes['zk_plan.task.attempt']) - Number(y.attributes['zk_plan.task.attempt']),
    );
    expect(failedTry?.status).toEqual({
      code: SpanStatusCode.ERROR,
      message: `Task ${b} failed: flaky: first try fails`,
    });
    expect(failedTry?.attributes).toMatchObject({
      'zk_plan.task.attempt': 1,
      'zk_plan.task.outcome': 'failed',
      'zk_plan.task.charged': true,
      'zk_plan.task.final': false,
      'error.type': 'TASK_FAILED',
    });
    expect(
      failedTry?.events.map((event) => [event.name, event.attributes?.['exception.message']]),
    ).toEqual([['exception', `Task ${b} failed: flaky: first try fails`]]);
    expect(secondTry?.status.code).toBe(SpanStatusCode.OK);
    expect(secondTry?.attributes['zk_plan.task.attempt']).toBe(2);

    // What the function starts runs inside its try's span.
    const [inside] = named(spans, 'inside');
    expect(parentIdOf(inside!)).toBe(keyed.get('a')?.[0]?.spanContext().spanId);
  });

  it('marks a try that fails for good as final, and starts a root span for a plan whose stored context is forged', async () => {
    const proc = open(new MemoryZooKeeper(), 'p');
    const plan = await proc.zkPlan.createPlan(PLANS);
    // Anyone may write the plan node: a value that is no trace context is ignored.
    const node = await proc.zk.getData(plan);
    const settings = decodeValue(plan, node.data!) as Record<string, unknown>;
    await proc.zk.setData(
      plan,
      Buffer.from(JSON.stringify({ ...settings, trace: { traceparent: 'x'.repeat(100_000) } })),
      node.stat.version,
    );
    await proc.zkPlan.addTask(plan, call('broken'), [], { key: 'broken' });
    await proc.zkPlan.markAsReady(plan);
    const pool = proc.zkPlan.startWorkers(PLANS, { count: 1, backoff: FAST_BACKOFF });
    await proc.zkPlan.waitForCompletion(plan, { timeoutMs: 5_000 }).catch(() => undefined);
    await pool.stop();
    const [broken] = named(tracing.spans(), 'zk_plan.task');
    expect(parentIdOf(broken!)).toBe(undefined);
    expect(broken?.status.code).toBe(SpanStatusCode.ERROR);
    expect(broken?.attributes).toMatchObject({
      'zk_plan.task.key': 'broken',
      'zk_plan.task.charged': true,
      'zk_plan.task.final': true,
      'error.type': 'TASK_FAILED',
    });
  });
});

describe('tracing a try the worker gives up', () => {
  it('ends the span of a try aborted by a pause with status UNSET, its reason an event, not an error', async () => {
    const proc = open(new MemoryZooKeeper(), 'p');
    const plan = await proc.zkPlan.createPlan(PLANS);
    await proc.zkPlan.addTask(plan, call('long'), [], { key: 'long' });
    await proc.zkPlan.markAsReady(plan);
    const pool = proc.zkPlan.startWorkers(PLANS, { count: 1, backoff: FAST_BACKOFF });
    await until(() => started.length === 1);
    await proc.zkPlan.control.pause(plan, { abortRunning: true });
    await until(() => named(tracing.spans(), 'zk_plan.task').length === 1);
    await pool.stop();
    const [paused] = named(tracing.spans(), 'zk_plan.task');
    expect(paused?.status.code).toBe(SpanStatusCode.UNSET);
    expect(paused?.attributes).toMatchObject({
      'zk_plan.task.outcome': 'given-back',
      'zk_plan.task.given_back': 'paused',
      'zk_plan.task.charged': false,
    });
    expect(paused?.attributes['error.type']).toBe(undefined);
    expect(paused?.events.map((event) => event.name)).toEqual(['exception']);
  });
});

describe('tracing schedules and jobs', () => {
  it("makes a tick's span the parent of the plan it creates", async () => {
    const server = new MemoryZooKeeper();
    const scheduler = schedulerProcess(server, 's');
    opened.push(scheduler);
    await scheduler.schedules.put({
      name: 'pulse',
      cron: '* * * * * *',
      spec: { tasks: { only: { fn: 'stamp', params: ['x'] } } },
      planParent: PLANS,
      misfire: 'fireAll',
      misfireGraceMs: 500,
      overlap: 'allow',
    });
    scheduler.clock.now = T0 + 1_020;
    await scheduler.scheduler.pass();
    expect(scheduler.fired).toHaveLength(1);
    const spans = tracing.spans();
    const [tick] = named(spans, 'zk_plan.schedule.tick');
    const [planSpan] = named(spans, 'zk_plan.plan');
    expect(tick?.attributes).toMatchObject({
      'zk_plan.schedules.path': '/schedules',
      'zk_plan.schedule.name': 'pulse',
      'zk_plan.schedule.tick': scheduler.fired[0],
      'zk_plan.schedule.tick.kind': 'cron',
      'zk_plan.schedule.tick.state': 'fired',
      'zk_plan.plan.path': expect.stringMatching(/^\/plans\/pulse@/),
    });
    expect(tick?.status.code).toBe(SpanStatusCode.OK);
    expect(parentIdOf(planSpan!)).toBe(tick?.spanContext().spanId);
    expect(planSpan?.attributes['zk_plan.plan.path']).toBe(tick?.attributes['zk_plan.plan.path']);
  });

  it("makes a job's run a span with its job, items, cause and try, and records a failed run's error", async () => {
    const job = resolveJob(
      { name: 'sync', fn: 'sync', workPool: { items: ['shard-0'] }, mode: 'continuous' },
      new Date(0),
    );
    const runner = new JobRunner(job, () => Promise.reject(new Error('sink down')), runnerHost());
    runner.setShare([{ id: 'shard-0', token: 7 }]);
    try {
      await until(() => named(tracing.spans(), 'zk_plan.job.run').length > 0);
    } finally {
      await runner.stop();
    }
    const [run] = named(tracing.spans(), 'zk_plan.job.run');
    expect(run?.attributes).toMatchObject({
      'zk_plan.jobs.path': '/jobs',
      'zk_plan.job.name': 'sync',
      'zk_plan.worker.id': 'w',
      'zk_plan.job.items': ['shard-0'],
      'zk_plan.job.cause': 'continuous',
      'zk_plan.job.try': 1,
      'zk_plan.job.outcome': 'failed',
      'error.type': 'Error',
    });
    expect(run?.status).toEqual({ code: SpanStatusCode.ERROR, message: 'sink down' });
    expect(run?.events.map((event) => event.name)).toEqual(['exception']);
  });
});
