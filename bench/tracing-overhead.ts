/**
 * What a task attempt's span costs the worker, per try: the calls the worker loop makes around a
 * try (startAttemptSpan, running the function inside the span, ending it), timed in a tight loop,
 * in three settings:
 *
 * - absent: `@opentelemetry/api` not loaded (as when it is not installed): one comparison;
 * - no provider: the API loaded, no SDK registered (OpenTelemetry's no-op tracer);
 * - SDK: a BasicTracerProvider with an AsyncLocalStorage context manager and a processor that drops spans.
 *
 * Run: `npx tsx bench/tracing-overhead.ts`. Prints ns per try for each.
 */
import { attemptSucceeded } from '../src/tracing/attempt-span.js';
import { startAttemptSpan } from '../src/tracing/tracing.js';
import { loadOtelApi } from '../src/tracing/otel-api.js';

const TRIES = 200_000;
const WHERE = {
  plan: '/plans/plan-0000000001',
  task: '/plans/plan-0000000001/task-0000000002',
  workerId: 'host-123-0',
};
const START = { fn: 'resize', attempt: 1, planName: 'nightly', key: 'resize-1' };
const TRACE = { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' };

function body(): number {
  return 1;
}

/** ns per try of the worker's span calls around `body`. */
function measure(): number {
  let sink = 0;
  const started = process.hrtime.bigint();
  for (let i = 0; i < TRIES; i++) {
    const span = startAttemptSpan(WHERE, START, TRACE);
    sink += span === undefined ? body() : span.run(body);
    attemptSucceeded(span, 'completed');
  }
  const elapsed = Number(process.hrtime.bigint() - started);
  if (sink !== TRIES) throw new Error('the body did not run once per try');
  return elapsed / TRIES;
}

function report(setting: string): void {
  measure(); // warm-up
  const runs = [measure(), measure(), measure()].sort((a, b) => a - b);
  console.log(`${setting.padEnd(12)} ${runs[1]?.toFixed(1)} ns per try (median of 3 × ${TRIES})`);
}

report('absent');
await loadOtelApi();
report('no provider');
const { context, trace } = await import('@opentelemetry/api');
const { AsyncLocalStorageContextManager } = await import('@opentelemetry/context-async-hooks');
const { BasicTracerProvider, NoopSpanProcessor } = await import('@opentelemetry/sdk-trace-base');
context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
trace.setGlobalTracerProvider(
  new BasicTracerProvider({ spanProcessors: [new NoopSpanProcessor()] }),
);
report('SDK');
