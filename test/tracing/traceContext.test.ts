import { createTraceState, type SpanContext, TraceFlags } from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';
import { linkTo, storedContextOf } from '../../src/tracing/traceContext.ts';

const TRACE_ID = '0af7651916cd43dd8448eb211c80319c';
const SPAN_ID = 'b7ad6b7169203331';

function spanContext(extra: Partial<SpanContext> = {}): SpanContext {
  return { traceId: TRACE_ID, spanId: SPAN_ID, traceFlags: TraceFlags.SAMPLED, ...extra };
}

describe('storedContextOf', () => {
  it('writes a W3C traceparent, version 00, with the flags', () => {
    expect(storedContextOf(spanContext())).toEqual({
      traceparent: `00-${TRACE_ID}-${SPAN_ID}-01`,
      tracestate: null,
    });
    expect(storedContextOf(spanContext({ traceFlags: TraceFlags.NONE }))?.traceparent).toBe(
      `00-${TRACE_ID}-${SPAN_ID}-00`,
    );
  });

  it('keeps the tracestate, cut to whole members within 512 characters', () => {
    const short = createTraceState('congo=t61rcWkgMzE,rojo=00f067aa0ba902b7');
    expect(storedContextOf(spanContext({ traceState: short }))?.tracestate).toBe(
      'congo=t61rcWkgMzE,rojo=00f067aa0ba902b7',
    );
    // Set one by one (the API refuses to parse a header over 512): the latest member comes first.
    let wide = createTraceState();
    for (let i = 0; i < 32; i++) wide = wide.set(`v${i}`, 'x'.repeat(30));
    expect(wide.serialize().length).toBeGreaterThan(512);
    const kept = storedContextOf(spanContext({ traceState: wide }))?.tracestate ?? '';
    expect(kept.length).toBeLessThanOrEqual(512);
    expect(kept.split(',').every((m) => /^v\d+=x{30}$/.test(m))).toBe(true);
    expect(kept.startsWith('v31=')).toBe(true);
  });

  it('is null for an invalid context (what the API hands out with no SDK)', () => {
    expect(storedContextOf(spanContext({ traceId: '0'.repeat(32), spanId: '0'.repeat(16) }))).toBeNull();
  });
});

describe('linkTo', () => {
  it('reads back what storedContextOf wrote, as a remote context', () => {
    const stored = storedContextOf(spanContext({ traceState: createTraceState('rojo=00f067aa0ba902b7') }));
    const link = linkTo(stored as NonNullable<typeof stored>);
    expect(link?.context).toMatchObject({
      traceId: TRACE_ID,
      spanId: SPAN_ID,
      traceFlags: TraceFlags.SAMPLED,
      isRemote: true,
    });
    expect(link?.context.traceState?.serialize()).toBe('rojo=00f067aa0ba902b7');
  });

  it('gives no link for a row that is not a valid traceparent', () => {
    for (const traceparent of [
      '',
      'garbage',
      `ff-${TRACE_ID}-${SPAN_ID}-01`,
      `00-${'0'.repeat(32)}-${SPAN_ID}-01`,
      `00-${TRACE_ID}-${'0'.repeat(16)}-01`,
      `00-${TRACE_ID.toUpperCase()}-${SPAN_ID}-01`,
    ]) {
      expect(linkTo({ traceparent, tracestate: null }), traceparent).toBeUndefined();
    }
  });
});
