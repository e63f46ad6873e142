/**
 * The trace context a plan node stores is written by anyone allowed to write the plan: what is read
 * back is a version-00 traceparent and a bounded printable tracestate, or nothing.
 */
import { describe, expect, it } from 'vitest';
import {
  MAX_TRACESTATE_CHARS,
  TRACEPARENT_CHARS,
  checkedTracestate,
  formatTraceparent,
  parseTraceparent,
  traceContextFrom,
} from '../../src/tracing/trace-context.js';

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const SPAN_ID = '00f067aa0ba902b7';
const TRACEPARENT = `00-${TRACE_ID}-${SPAN_ID}-01`;

describe('stored trace context', () => {
  it('formats a span context as a version-00 traceparent and parses it back', () => {
    const formatted = formatTraceparent({ traceId: TRACE_ID, spanId: SPAN_ID, traceFlags: 1 });
    expect(formatted).toBe(TRACEPARENT);
    expect(formatted).toHaveLength(TRACEPARENT_CHARS);
    expect(parseTraceparent(formatted)).toEqual({
      traceId: TRACE_ID,
      spanId: SPAN_ID,
      traceFlags: 1,
    });
    expect(formatTraceparent({ traceId: TRACE_ID, spanId: SPAN_ID, traceFlags: 0 })).toBe(
      `00-${TRACE_ID}-${SPAN_ID}-00`,
    );
  });

  it('formats nothing for invalid ids (a span that traces nothing)', () => {
    expect(formatTraceparent({ traceId: '0'.repeat(32), spanId: SPAN_ID, traceFlags: 1 })).toBe(
      undefined,
    );
    expect(formatTraceparent({ traceId: TRACE_ID, spanId: '0'.repeat(16), traceFlags: 1 })).toBe(
      undefined,
    );
    expect(formatTraceparent({ traceId: 'xyz', spanId: SPAN_ID, traceFlags: 1 })).toBe(undefined);
  });

  it.each([
    ['another version', `01-${TRACE_ID}-${SPAN_ID}-01`],
    ['upper case', `00-${TRACE_ID.toUpperCase()}-${SPAN_ID}-01`],
    ['an all-zero trace id', `00-${'0'.repeat(32)}-${SPAN_ID}-01`],
    ['an all-zero span id', `00-${TRACE_ID}-${'0'.repeat(16)}-01`],
    ['a trailing field', `${TRACEPARENT}-00`],
    ['a short trace id', `00-${TRACE_ID.slice(1)}-${SPAN_ID}-01`],
    ['a control character', `00-${TRACE_ID}-${SPAN_ID}-0\n`],
    ['a huge string', `${TRACEPARENT}${'a'.repeat(1_000_000)}`],
    ['a number', 42],
    ['an object', { traceparent: TRACEPARENT }],
  ])('refuses a traceparent with %s', (_what, value) => {
    expect(parseTraceparent(value)).toBe(undefined);
    expect(traceContextFrom({ traceparent: value })).toBe(undefined);
  });

  it('keeps a printable tracestate up to the bound, and drops a longer or unprintable one', () => {
    const longest = `k=${'v'.repeat(MAX_TRACESTATE_CHARS - 2)}`;
    expect(checkedTracestate('rojo=00f067aa0ba902b7,congo=t61rcWkgMzE')).toBe(
      'rojo=00f067aa0ba902b7,congo=t61rcWkgMzE',
    );
    expect(checkedTracestate(longest)).toBe(longest);
    expect(checkedTracestate(`${longest}v`)).toBe(undefined);
    expect(checkedTracestate('a=b\u001b[2J')).toBe(undefined);
    expect(checkedTracestate('a=b\u00e9')).toBe(undefined);
    expect(checkedTracestate('')).toBe(undefined);
    expect(checkedTracestate(['a=b'])).toBe(undefined);
  });

  it('reads a stored context with its tracestate, without a bad tracestate, or not at all', () => {
    expect(traceContextFrom({ traceparent: TRACEPARENT, tracestate: 'a=b' })).toEqual({
      traceparent: TRACEPARENT,
      tracestate: 'a=b',
    });
    expect(traceContextFrom({ traceparent: TRACEPARENT, tracestate: 'x'.repeat(100_000) })).toEqual(
      { traceparent: TRACEPARENT },
    );
    expect(traceContextFrom({ tracestate: 'a=b' })).toBe(undefined);
    expect(traceContextFrom(null)).toBe(undefined);
    expect(traceContextFrom(TRACEPARENT)).toBe(undefined);
    expect(traceContextFrom(undefined)).toBe(undefined);
  });
});
