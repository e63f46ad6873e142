/**
 * Spans as plain records that cross process boundaries (JSON lines), so a test can assemble the
 * spans of several worker processes and its own into one tree; and an exporter that appends each
 * ended span to a file, one appendFileSync per line (lines of different processes never mix).
 */
import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base';

/** The directory worker processes loading tracing-functions.ts write their spans to (`spans-<pid>.jsonl`). */
export const SPAN_DIR_ENV = 'ZK_PLAN_SPAN_DIR';

export interface SpanRecord {
  readonly name: string;
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId?: string;
  readonly kind: number;
  readonly attributes: Record<string, unknown>;
  readonly status: { readonly code: number; readonly message?: string };
  readonly events: readonly {
    readonly name: string;
    readonly attributes: Record<string, unknown>;
  }[];
  /** The process that ended the span. */
  readonly pid: number;
}

export function spanRecord(span: ReadableSpan): SpanRecord {
  const parentSpanId = span.parentSpanContext?.spanId;
  return {
    name: span.name,
    traceId: span.spanContext().traceId,
    spanId: span.spanContext().spanId,
    ...(parentSpanId === undefined ? {} : { parentSpanId }),
    kind: span.kind,
    attributes: { ...span.attributes },
    status: { ...span.status },
    events: span.events.map((event) => ({ name: event.name, attributes: { ...event.attributes } })),
    pid: process.pid,
  };
}

/** Appends every span it is given to `file` as a JSON line, at once (with a SimpleSpanProcessor: as each ends). */
export class FileSpanExporter implements SpanExporter {
  constructor(private readonly file: string) {}

  export(spans: ReadableSpan[], resultCallback: Parameters<SpanExporter['export']>[1]): void {
    for (const span of spans) appendFileSync(this.file, `${JSON.stringify(spanRecord(span))}\n`);
    resultCallback({ code: 0 });
  }

  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}

/** The spans a FileSpanExporter wrote to `file` (none when it does not exist yet). */
export function readSpanRecords(file: string): SpanRecord[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.length > 0)
    .map((line) => JSON.parse(line) as SpanRecord);
}
