import { createTraceState, isSpanContextValid, type Link, type SpanContext } from '@opentelemetry/api';

/** A job's creation context as stored with it (job_traces): W3C Trace Context headers' values. */
export interface StoredTraceContext {
  readonly traceparent: string;
  readonly tracestate: string | null;
}

/** The widest tracestate kept: W3C asks a carrier to keep at least 512 characters, whole members. */
const MAX_TRACESTATE = 512;
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** Pure: a span's context as `traceparent` (version 00) and `tracestate`, or null if it is not valid. */
export function storedContextOf(span: SpanContext): StoredTraceContext | null {
  if (!isSpanContextValid(span)) return null;
  const flags = (span.traceFlags & 0xff).toString(16).padStart(2, '0');
  return { traceparent: `00-${span.traceId}-${span.spanId}-${flags}`, tracestate: boundedTraceState(span) };
}

/** A tracestate over the limit loses members from its end (the oldest, by W3C's ordering). */
function boundedTraceState(span: SpanContext): string | null {
  let text = span.traceState?.serialize() ?? '';
  while (text.length > MAX_TRACESTATE) text = text.slice(0, Math.max(0, text.lastIndexOf(',')));
  return text === '' ? null : text;
}

/**
 * Pure: the link from an attempt's span to the context its job was enqueued under, or undefined
 * when the stored text is not a traceparent as storedContextOf writes it (rows are written around
 * sluice too): a bad row costs its link, never the attempt.
 */
export function linkTo(stored: StoredTraceContext): Link | undefined {
  const match = TRACEPARENT.exec(stored.traceparent);
  if (!match || match[1] === 'ff') return undefined;
  const context: SpanContext = {
    traceId: match[2] as string,
    spanId: match[3] as string,
    traceFlags: Number.parseInt(match[4] as string, 16),
    isRemote: true,
    ...(stored.tracestate ? { traceState: createTraceState(stored.tracestate) } : {}),
  };
  return isSpanContextValid(context) ? { context } : undefined;
}
