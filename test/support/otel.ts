/**
 * OpenTelemetry for tests: an SDK tracer provider that keeps every ended span in memory
 * (InMemorySpanExporter), registered globally with an AsyncLocalStorage context manager (so that
 * spans started inside `context.with` nest), and taken down again after the test.
 */
import { context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
} from '@opentelemetry/sdk-trace-base';

export interface TestTracing {
  readonly exporter: InMemorySpanExporter;
  /** Every span ended so far. */
  spans(): ReadableSpan[];
  /** Unregisters the provider and the context manager. */
  shutdown(): Promise<void>;
}

/** Registers an in-memory tracer provider and a context manager for the current test. */
export function installTestTracing(): TestTracing {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const contextManager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(contextManager);
  trace.setGlobalTracerProvider(provider);
  return {
    exporter,
    spans: () => exporter.getFinishedSpans(),
    shutdown: async () => {
      await provider.shutdown();
      trace.disable();
      context.disable();
    },
  };
}

/** The span's parent span id, when it has a parent. */
export function parentIdOf(span: ReadableSpan): string | undefined {
  return span.parentSpanContext?.spanId;
}
