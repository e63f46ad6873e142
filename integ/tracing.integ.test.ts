/**
 * OpenTelemetry traces across processes, on a real ZooKeeper: a plan of three levels (2 → 3 → 1
 * tasks) is submitted inside a "request" span in the test process and run by two `zk-plan worker`
 * processes, each exporting its spans to a file (integ/support/tracing-functions.ts). Assembled,
 * the spans form one trace: request → plan span → one span per try of each task, from both
 * processes, with their attributes; the try of a task that failed carries the exception and status
 * ERROR; what a function starts is a child of its try's span.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { call } from '../src/index.js';
import { installTestTracing, type TestTracing } from '../test/support/otel.js';
import {
  SPAN_DIR_ENV,
  readSpanRecords,
  spanRecord,
  type SpanRecord,
} from './support/span-records.js';
import { WorkerFleet, faultWorkerSpec } from './support/worker-process.js';
import { useZooKeeper, waitFor } from './support/zk-test-env.js';

const env = useZooKeeper('tracing');
const TRACING_FUNCTIONS = join(
  dirname(fileURLToPath(import.meta.url)),
  'support',
  'tracing-functions.ts',
);

let tracing: TestTracing | undefined;
let fleet: WorkerFleet | undefined;
let spanDir: string | undefined;

afterEach(async () => {
  await fleet?.stopAll();
  await tracing?.shutdown();
  if (spanDir !== undefined) rmSync(spanDir, { recursive: true, force: true });
  delete process.env[SPAN_DIR_ENV];
  fleet = undefined;
  tracing = undefined;
  spanDir = undefined;
});

/** Every span the worker processes wrote so far. */
function workerSpans(dir: string, pids: readonly number[]): SpanRecord[] {
  return pids.flatMap((pid) => readSpanRecords(join(dir, `spans-${pid}.jsonl`)));
}

describe('traces across worker processes', () => {
  it('puts every try of a 3-level plan run by two processes under the plan span, under the request that submitted it', async () => {
    tracing = installTestTracing();
    spanDir = mkdtempSync(join(tmpdir(), 'zk-plan-spans-'));
    process.env[SPAN_DIR_ENV] = spanDir; // inherited by the worker processes
    const parent = env.root();
    fleet = new WorkerFleet(
      faultWorkerSpec({
        connect: env.connectString,
        parent,
        logFile: join(spanDir, 'unused-execution.log'),
        functionsModule: TRACING_FUNCTIONS,
        extraArgs: ['--no-retention'],
      }),
    );
    const workers = [fleet.spawn('w1'), fleet.spawn('w2')];
    await Promise.all(workers.map((worker) => worker.ready()));
    const zkPlan = await env.zkPlan();

    // Two roots, three tasks on them, one on those three; d fails its first try.
    const { plan, tasks } = await trace
      .getTracer('integ')
      .startActiveSpan('request', async (request) => {
        const made = await zkPlan.createPlan(parent, { name: 'traced-run', initialDelayMs: 50 });
        const a = await zkPlan.addTask(made, call('step', 'a', 400), [], { key: 'a' });
        const b = await zkPlan.addTask(made, call('step', 'b', 400), [], { key: 'b' });
        const c = await zkPlan.addTask(made, call('step', 'c', 300), [a, b], { key: 'c' });
        const d = await zkPlan.addTask(made, call('flaky', 'd', 300), [a], { key: 'd' });
        const e = await zkPlan.addTask(made, call('step', 'e', 300), [b], { key: 'e' });
        const f = await zkPlan.addTask(made, call('step', 'f', 50), [c, d, e], {
          key: 'f',
          keepResult: true,
        });
        await zkPlan.markAsReady(made);
        request.end();
        return { plan: made, tasks: { a, b, c, d, e, f } };
      });
    await zkPlan.waitForCompletion(plan, { timeoutMs: 30_000 });
    expect(await zkPlan.getResult(tasks.f)).toBe('f+c+a+b+d+a+e+b');

    const pids = workers.map((worker) => worker.pid);
    // A try's span ends right after its result is stored: wait for the last one to reach its file.
    const isTry = (span: SpanRecord): boolean => span.name === 'zk_plan.task';
    const dir = spanDir;
    await waitFor('the spans of 7 tries', () => workerSpans(dir, pids).filter(isTry).length >= 7);
    const own = tracing.spans().map(spanRecord);
    const remote = workerSpans(spanDir, pids);
    const [request] = own.filter((span) => span.name === 'request');
    const [planSpan] = own.filter((span) => span.name === 'zk_plan.plan');

    // request → plan span, in the submitting process.
    expect(request?.parentSpanId).toBe(undefined);
    expect(planSpan).toMatchObject({
      traceId: request?.traceId,
      parentSpanId: request?.spanId,
      kind: SpanKind.PRODUCER,
      attributes: { 'zk_plan.plan.path': plan, 'zk_plan.plan.name': 'traced-run' },
    });

    // plan span → one span per try, in the worker processes, both of them.
    const tries = remote.filter(isTry);
    expect(tries).toHaveLength(7);
    for (const span of tries) {
      expect(span).toMatchObject({
        traceId: request?.traceId,
        parentSpanId: planSpan?.spanId,
        kind: SpanKind.CONSUMER,
        attributes: {
          'zk_plan.plan.path': plan,
          'zk_plan.plan.name': 'traced-run',
          'zk_plan.worker.id': expect.stringMatching(/./),
        },
      });
      expect(pids).toContain(span.pid);
    }
    expect(new Set(tries.map((span) => span.pid)).size).toBe(2);
    const triesOf = (key: string): SpanRecord[] =>
      tries
        .filter((span) => span.attributes['zk_plan.task.key'] === key)
        .sort(
          (x, y) =>
            Number(x.attributes['zk_plan.task.attempt']) -
            Number(y.attributes['zk_plan.task.attempt']),
        );
    for (const [key, task] of Object.entries(tasks)) {
      const [last] = triesOf(key).slice(-1);
      expect(last?.attributes).toMatchObject({
        'zk_plan.task.path': task,
        'zk_plan.task.function': key === 'd' ? 'flaky' : 'step',
        'zk_plan.task.outcome': 'completed',
      });
      expect(last?.status.code).toBe(SpanStatusCode.OK);
    }

    // d's first try failed: its span carries the exception and status ERROR; its second succeeded.
    const [failed, retried] = triesOf('d');
    expect(failed?.attributes).toMatchObject({
      'zk_plan.task.attempt': 1,
      'zk_plan.task.outcome': 'failed',
      'zk_plan.task.charged': true,
      'zk_plan.task.final': false,
    });
    expect(failed?.status.code).toBe(SpanStatusCode.ERROR);
    expect(failed?.status.message).toContain('flaky d fails on its first try');
    expect(failed?.events).toEqual([
      {
        name: 'exception',
        attributes: expect.objectContaining({
          'exception.message': expect.stringContaining('flaky d fails on its first try'),
        }),
      },
    ]);
    expect(retried?.attributes['zk_plan.task.attempt']).toBe(2);
    for (const key of ['a', 'b', 'c', 'e', 'f']) expect(triesOf(key)).toHaveLength(1);

    // What each function started is a child of its try's span, in the same process.
    const steps = remote.filter((span) => span.name.startsWith('step '));
    expect(steps.map((span) => span.name).sort()).toEqual([
      'step a',
      'step b',
      'step c',
      'step d',
      'step e',
      'step f',
    ]);
    for (const step of steps) {
      const owner = tries.find((span) => span.spanId === step.parentSpanId);
      expect(owner?.attributes['zk_plan.task.key']).toBe(step.name.slice('step '.length));
      expect(owner?.pid).toBe(step.pid);
    }
  });
});
