import { createTraceState, type SpanContext, TraceFlags, type TraceState } from '@opentelemetry/api';
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

  it("keeps only W3C's members: other text, repeated keys and surrounding spaces go; a throwing tracestate is none", () => {
    const state = createTraceState('rojo=1').set('bad', 'caf\u00e9').set('ok', 'a b').set('Up', 'x');
    const spaced = { serialize: () => ' rojo=1 ,\tb=2,rojo=3,k=v,v,=x,e=' } as unknown as TraceState;
    const throwing = {
      serialize: () => {
        throw new Error('no');
      },
    } as unknown as TraceState;
    expect(storedContextOf(spanContext({ traceState: state }))?.tracestate).toBe('ok=a b,rojo=1');
    expect(storedContextOf(spanContext({ traceState: spaced }))?.tracestate).toBe('rojo=1,b=2,k=v');
    expect(storedContextOf(spanContext({ traceState: throwing }))).toEqual({
      traceparent: `00-${TRACE_ID}-${SPAN_ID}-01`,
      tracestate: null,
    });
  });

  it('writes the ids in lower case, as W3C does', () => {
    const upper = spanContext({ traceId: TRACE_ID.toUpperCase(), spanId: SPAN_ID.toUpperCase() });
    expect(storedContextOf(upper)?.traceparent).toBe(`00-${TRACE_ID}-${SPAN_ID}-01`);
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
