/**
 * The task functions of the tracing test, loaded by real `zk-plan worker` processes
 * (`--functions integ/support/tracing-functions.ts`). Loading it registers an OpenTelemetry SDK
 * tracer provider that appends every ended span to `<ZK_PLAN_SPAN_DIR>/spans-<pid>.jsonl`, and an
 * AsyncLocalStorage context manager, as an application's tracing setup would, before the worker
 * starts its loops.
 *
 * - `step(label, ms)`: waits `ms`, starts and ends a span `step <label>` of its own (a child of
 *   its try's span), returns `label` joined with its inputs.
 * - `flaky(label, ms)`: like `step`, but its first try throws `flaky <label> fails on its first try`.
 */
import { join } from 'node:path';
import { context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { BasicTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { TaskContext } from '../../src/index.js';
import { FileSpanExporter, SPAN_DIR_ENV } from './span-records.js';

const spanDir = process.env[SPAN_DIR_ENV] ?? '';
// A worker whose spans go nowhere would make a test that cannot see them: refuse to load instead.
if (spanDir === '') throw new Error(`${SPAN_DIR_ENV} is not set`);

context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
trace.setGlobalTracerProvider(
  new BasicTracerProvider({
    spanProcessors: [
      new SimpleSpanProcessor(new FileSpanExporter(join(spanDir, `spans-${process.pid}.jsonl`))),
    ],
  }),
);

type Context = TaskContext<unknown[]>;

async function work(ctx: Context, inputs: unknown[]): Promise<string> {
  const [label, ms] = ctx.params;
  await new Promise((resolve) => setTimeout(resolve, Number(ms ?? 0)));
  trace
    .getTracer('tracing-functions')
    .startSpan(`step ${String(label)}`)
    .end();
  return [String(label), ...inputs.map(String)].join('+');
}

export default {
  async step(ctx: Context, ...inputs: unknown[]): Promise<string> {
    return await work(ctx, inputs);
  },

  async flaky(ctx: Context, ...inputs: unknown[]): Promise<string> {
    if (ctx.attempt === 1) throw new Error(`flaky ${String(ctx.params[0])} fails on its first try`);
    return await work(ctx, inputs);
  },
};
