/**
 * The trace context a plan carries from the code that submitted it to every worker that runs its
 * tasks: a W3C Trace Context `traceparent` (and `tracestate`, when there is one), kept in the plan
 * node's settings as `trace`. Anyone allowed to write a plan node can put anything there, so what is
 * read back is checked exactly, and bounded before anything is allocated from it: a value that is
 * not one is ignored (the plan's attempts then start traces of their own), never an error.
 *
 * The format is written and parsed here rather than by the process's registered propagator: every
 * worker process reads the same field whatever propagator it registered (B3, Jaeger, none), and the
 * check is exact.
 */

/**
 * A plan's stored trace context: the W3C `traceparent` of the plan span, and its `tracestate`.
 *
 * @category Tracing
 */
export interface StoredTraceContext {
  /** `00-<32 hex trace id>-<16 hex span id>-<2 hex flags>`, lower case (W3C Trace Context, version 00). */
  readonly traceparent: string;
  /** The vendors' list (`key=value,…`), at most MAX_TRACESTATE_CHARS characters, when there is one. */
  readonly tracestate?: string;
}

/** The parts of a traceparent, as OpenTelemetry's SpanContext names them. */
export interface ParsedTraceparent {
  readonly traceId: string;
  readonly spanId: string;
  readonly traceFlags: number;
}

/** A version-00 traceparent is exactly this long: `00-` + 32 + `-` + 16 + `-` + 2. */
export const TRACEPARENT_CHARS = 55;

/**
 * The longest tracestate kept. W3C Trace Context asks propagators to pass on at least 512
 * characters of it; a longer one is dropped (the traceparent is still used).
 */
export const MAX_TRACESTATE_CHARS = 512;

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;
const ALL_ZERO = /^0+$/;
/** A tracestate is printable ASCII: list members `key=value` separated by commas and blanks. */
const TRACESTATE = /^[\x20-\x7e]*$/;

/** The traceparent of a span context; undefined when its ids are not valid ones (a span that is not sampled anywhere). */
export function formatTraceparent(parts: ParsedTraceparent): string | undefined {
  const flags = parts.traceFlags & 0xff;
  const traceparent = `00-${parts.traceId}-${parts.spanId}-${flags.toString(16).padStart(2, '0')}`;
  return parseTraceparent(traceparent) === undefined ? undefined : traceparent;
}

/** The parts of a version-00 traceparent; undefined for anything else (all-zero ids included). */
export function parseTraceparent(value: unknown): ParsedTraceparent | undefined {
  if (typeof value !== 'string' || value.length !== TRACEPARENT_CHARS) return undefined;
  const match = TRACEPARENT.exec(value);
  if (match === null) return undefined;
  const [, traceId, spanId, flags] = match as unknown as [string, string, string, string];
  if (ALL_ZERO.test(traceId) || ALL_ZERO.test(spanId)) return undefined;
  return { traceId, spanId, traceFlags: Number.parseInt(flags, 16) };
}

/** A tracestate worth keeping: a string of printable ASCII within MAX_TRACESTATE_CHARS; undefined otherwise. */
export function checkedTracestate(value: unknown): string | undefined {
  if (typeof value !== 'string' || value.length === 0 || value.length > MAX_TRACESTATE_CHARS)
    return undefined;
  return TRACESTATE.test(value) ? value : undefined;
}

/**
 * The trace context stored in a plan node's settings (`trace`), checked: undefined when there is
 * none or it is not a valid one. Lengths are checked before any pattern runs.
 */
export function traceContextFrom(stored: unknown): StoredTraceContext | undefined {
  if (typeof stored !== 'object' || stored === null) return undefined;
  const record = stored as { traceparent?: unknown; tracestate?: unknown };
  if (parseTraceparent(record.traceparent) === undefined) return undefined;
  const tracestate = checkedTracestate(record.tracestate);
  return {
    traceparent: record.traceparent as string,
    ...(tracestate === undefined ? {} : { tracestate }),
  };
}
