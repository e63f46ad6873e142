/**
 * The spans zk-plan makes, behind a narrow interface the plan writer, the worker loop, the
 * scheduler and the job runner call. Each `start…Span` answers undefined when
 * `@opentelemetry/api` is not loaded (absent, or its import not settled yet): the caller's cost is
 * then one comparison, and no object is made. With it loaded, spans go to whatever tracer provider
 * the application registered (none: OpenTelemetry's no-op tracer).
 *
 * The span tree, and why the plan span is the submitter's: docs/guide/tracing.md.
 */
import type { Attributes, Context, Span, Tracer } from '@opentelemetry/api';
import {
  ATTEMPT_SPAN,
  ATTR_ERROR_TYPE,
  ATTR_JOBS_PATH,
  ATTR_JOB_CAUSE,
  ATTR_JOB_ITEMS,
  ATTR_JOB_NAME,
  ATTR_JOB_TRY,
  ATTR_PLANS_PARENT,
  ATTR_PLAN_NAME,
  ATTR_PLAN_PATH,
  ATTR_SCHEDULES_PATH,
  ATTR_SCHEDULE_NAME,
  ATTR_TASK_ATTEMPT,
  ATTR_TASK_FUNCTION,
  ATTR_TASK_KEY,
  ATTR_TASK_PATH,
  ATTR_TICK,
  ATTR_TICK_KIND,
  ATTR_WORKER_ID,
  JOB_RUN_SPAN,
  MAX_ATTRIBUTE_CHARS,
  PLAN_SPAN,
  TICK_SPAN,
} from './attributes.js';
import { otelApi, otelApiLoading, type OtelApi } from './otel-api.js';
import {
  checkedTracestate,
  formatTraceparent,
  parseTraceparent,
  type StoredTraceContext,
} from './trace-context.js';

/** The instrumentation scope zk-plan's spans are made under. */
export const TRACER_NAME = 'zk-plan';

/**
 * The load of `@opentelemetry/api` while it is still under way (it starts as zk-plan is imported),
 * undefined once it settled. The entry points that make spans wait for it before their first one
 * (creating a plan, a worker loop, a tick, a job run) with
 * `const loading = tracingLoading(); if (loading !== undefined) await loading;`: once it settled,
 * they go on without a microtask.
 */
export function tracingLoading(): Promise<void> | undefined {
  return otelApiLoading();
}

/** A span zk-plan started, with the few things its callers do to it. */
export interface TracedSpan {
  /** Runs `fn` with this span as the active one: spans the code in it starts are its children. */
  run<T>(fn: () => T): T;
  /** Sets an attribute (a string is cut to MAX_ATTRIBUTE_CHARS). */
  set(name: string, value: string | number | boolean | readonly string[]): void;
  /** Ends it with status OK. */
  succeeded(): void;
  /** Records `error` as an exception event, sets status ERROR and `error.type`, and ends it. */
  failed(error: unknown): void;
  /** Ends it with status UNSET, recording `error` (when given) as an event: an end that is nobody's failure. */
  ended(error?: unknown): void;
}

/** What the plan span knows as a plan is created: where, and its name. */
export interface PlanSpanLabels {
  readonly parent: string;
  readonly name: string | undefined;
}

/** The plan span and the trace context its plan node stores (undefined when it has no valid one). */
export interface PlanSpan {
  readonly span: TracedSpan;
  readonly stored: StoredTraceContext | undefined;
}

/**
 * The span of a plan's creation, child of the context active in the caller (its request). Its
 * trace context, stored in the plan node, makes the plan's attempts its children in every process.
 */
export function startPlanSpan(labels: PlanSpanLabels): PlanSpan | undefined {
  const api = otelApi();
  if (api === undefined) return undefined;
  const attributes: Attributes = { [ATTR_PLANS_PARENT]: bounded(labels.parent) };
  if (labels.name !== undefined) attributes[ATTR_PLAN_NAME] = bounded(labels.name);
  const span = tracer(api).startSpan(
    PLAN_SPAN,
    { kind: api.SpanKind.PRODUCER, attributes },
    api.context.active(),
  );
  return { span: new OtelSpan(api, span), stored: storedContextOf(api, span) };
}

/** The field a plan node's settings get for the plan span's context (`trace`); none when there is no span or no valid context. */
export function traceField(traced: PlanSpan | undefined): { trace?: StoredTraceContext } {
  return traced?.stored === undefined ? {} : { trace: traced.stored };
}

/** Where a try runs: its claim's plan, task and worker. */
export interface AttemptWhere {
  readonly plan: string;
  readonly task: string;
  readonly workerId: string;
}

/** What the worker read about the try as it started. */
export interface AttemptStart {
  readonly fn: string;
  readonly attempt: number;
  readonly planName?: string;
  readonly key?: string;
}

/**
 * The span of one try of a task as its function starts, child of its plan's stored context
 * (`trace`) when it has one, else a root. Its arguments are the caller's own objects: without
 * OpenTelemetry nothing is made.
 */
export function startAttemptSpan(
  where: AttemptWhere,
  start: AttemptStart,
  trace: StoredTraceContext | undefined,
): TracedSpan | undefined {
  const api = otelApi();
  if (api === undefined) return undefined;
  const attributes: Attributes = {
    [ATTR_PLAN_PATH]: where.plan,
    [ATTR_TASK_PATH]: where.task,
    [ATTR_TASK_FUNCTION]: bounded(start.fn),
    [ATTR_TASK_ATTEMPT]: start.attempt,
    [ATTR_WORKER_ID]: bounded(where.workerId),
  };
  if (start.planName !== undefined) attributes[ATTR_PLAN_NAME] = bounded(start.planName);
  if (start.key !== undefined) attributes[ATTR_TASK_KEY] = bounded(start.key);
  const span = tracer(api).startSpan(
    ATTEMPT_SPAN,
    { kind: api.SpanKind.CONSUMER, attributes },
    contextFrom(api, trace),
  );
  return new OtelSpan(api, span);
}

/** What a tick span is labelled with. */
export interface TickLabels {
  readonly schedules: string;
  readonly schedule: string;
  readonly tick: string;
  readonly kind: string;
  readonly plan: string;
}

/** The span of a tick being decided by the scheduler that holds its lock; the plan it makes is created under it. */
export function startTickSpan(labels: TickLabels): TracedSpan | undefined {
  const api = otelApi();
  if (api === undefined) return undefined;
  const span = tracer(api).startSpan(
    TICK_SPAN,
    {
      kind: api.SpanKind.INTERNAL,
      attributes: {
        [ATTR_SCHEDULES_PATH]: labels.schedules,
        [ATTR_SCHEDULE_NAME]: bounded(labels.schedule),
        [ATTR_TICK]: bounded(labels.tick),
        [ATTR_TICK_KIND]: bounded(labels.kind),
        [ATTR_PLAN_PATH]: bounded(labels.plan),
      },
    },
    api.context.active(),
  );
  return new OtelSpan(api, span);
}

/** What a job run span is labelled with. */
export interface JobRunLabels {
  readonly jobs: string;
  readonly job: string;
  readonly workerId: string;
  /** The share's items (their ids are the attribute). */
  readonly items: readonly { readonly id: string }[];
  readonly cause: string;
  readonly attempt: number;
}

/** The span of one run of a job's function on the job worker that holds its share. */
export function startJobRunSpan(labels: JobRunLabels): TracedSpan | undefined {
  const api = otelApi();
  if (api === undefined) return undefined;
  const span = tracer(api).startSpan(
    JOB_RUN_SPAN,
    {
      kind: api.SpanKind.INTERNAL,
      attributes: {
        [ATTR_JOBS_PATH]: labels.jobs,
        [ATTR_JOB_NAME]: bounded(labels.job),
        [ATTR_WORKER_ID]: bounded(labels.workerId),
        [ATTR_JOB_ITEMS]: labels.items.map((item) => bounded(item.id)),
        [ATTR_JOB_CAUSE]: labels.cause,
        [ATTR_JOB_TRY]: labels.attempt,
      },
    },
    api.context.active(),
  );
  return new OtelSpan(api, span);
}

class OtelSpan implements TracedSpan {
  constructor(
    private readonly api: OtelApi,
    private readonly span: Span,
  ) {}

  run<T>(fn: () => T): T {
    const { context, trace } = this.api;
    return context.with(trace.setSpan(context.active(), this.span), fn);
  }

  set(name: string, value: string | number | boolean | readonly string[]): void {
    if (typeof value === 'string') this.span.setAttribute(name, bounded(value));
    else if (typeof value === 'object') this.span.setAttribute(name, value.map(bounded));
    else this.span.setAttribute(name, value);
  }

  succeeded(): void {
    this.span.setStatus({ code: this.api.SpanStatusCode.OK });
    this.span.end();
  }

  failed(error: unknown): void {
    const recorded = asError(error);
    this.span.recordException(recorded);
    this.span.setAttribute(ATTR_ERROR_TYPE, bounded(errorType(recorded)));
    this.span.setStatus({
      code: this.api.SpanStatusCode.ERROR,
      message: bounded(recorded.message),
    });
    this.span.end();
  }

  ended(error?: unknown): void {
    if (error !== undefined) this.span.recordException(asError(error));
    this.span.end();
  }
}

/** The tracer last asked for, and the provider it came from. */
let cached: { readonly provider: unknown; readonly tracer: Tracer } | undefined;

/**
 * zk-plan's tracer from the provider registered now: asked again only when another provider was
 * registered since (getTracer costs as much as a span), so a provider registered later, or again
 * (in tests), is the one used.
 */
function tracer(api: OtelApi): Tracer {
  const global = api.trace.getTracerProvider() as { getDelegate?: () => unknown };
  const provider = typeof global.getDelegate === 'function' ? global.getDelegate() : global;
  if (cached !== undefined && cached.provider === provider) return cached.tracer;
  const fresh = { provider, tracer: api.trace.getTracer(TRACER_NAME) };
  cached = fresh;
  return fresh.tracer;
}

/** The context a stored trace context continues; the root context when there is none (the span starts a trace). */
function contextFrom(api: OtelApi, stored: StoredTraceContext | undefined): Context {
  const parsed = stored === undefined ? undefined : parseTraceparent(stored.traceparent);
  if (stored === undefined || parsed === undefined) return api.ROOT_CONTEXT;
  const tracestate = checkedTracestate(stored.tracestate);
  return api.trace.setSpanContext(api.ROOT_CONTEXT, {
    ...parsed,
    isRemote: true,
    ...(tracestate === undefined ? {} : { traceState: api.createTraceState(tracestate) }),
  });
}

/** A span's context as a plan node stores it; undefined when it has no valid ids (nothing traces). */
function storedContextOf(api: OtelApi, span: Span): StoredTraceContext | undefined {
  const spanContext = span.spanContext();
  if (!api.isSpanContextValid(spanContext)) return undefined;
  const traceparent = formatTraceparent(spanContext);
  if (traceparent === undefined) return undefined;
  const tracestate = checkedTracestate(spanContext.traceState?.serialize());
  return { traceparent, ...(tracestate === undefined ? {} : { tracestate }) };
}

function bounded(value: string): string {
  return value.length > MAX_ATTRIBUTE_CHARS ? value.slice(0, MAX_ATTRIBUTE_CHARS) : value;
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}

/** zk-plan's error code when the error has one, else its class's name. */
function errorType(error: Error): string {
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && code.length > 0 ? code : error.name;
}
