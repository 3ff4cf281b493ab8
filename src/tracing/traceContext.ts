import { createTraceState, isSpanContextValid, type Link, type SpanContext } from '@opentelemetry/api';
import type { StoredTraceContext } from '../model/storedTraceContext.ts';

/** The widest tracestate kept: W3C asks a carrier to keep at least 512 characters, whole members. */
const MAX_TRACESTATE = 512;
/** W3C's most members in a tracestate. */
const MAX_MEMBERS = 32;
/**
 * The most of a serialized tracestate looked at: whole members past it could never fit the 512
 * kept, whatever invalid ones come first short of a long run (which then costs its members).
 */
const SCANNED_TRACESTATE = 8_192;
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;
/**
 * A tracestate member's key and value, as W3C Trace Context (level 1) defines them: a key of
 * lower-case ASCII; a value of printable ASCII but ',' and '=', not ending in a space.
 */
const MEMBER_KEY = /^(?:[a-z][_0-9a-z*/-]{0,255}|[a-z0-9][_0-9a-z*/-]{0,240}@[a-z][_0-9a-z*/-]{0,13})$/;
const MEMBER_VALUE = /^[ -+\--<>-~]{0,255}[!-+\--<>-~]$/;

/**
 * Pure, never throws: a span's context as `traceparent` (version 00, lower-case hex as W3C
 * writes it, whatever case the context came in) and `tracestate`, or null if it is not valid.
 * Tracing never fails an enqueue: a context that cannot be read is none, a tracestate that cannot
 * be is dropped.
 */
export function storedContextOf(span: SpanContext): StoredTraceContext | null {
  try {
    if (!isSpanContextValid(span)) return null;
    const flags = (span.traceFlags & 0xff).toString(16).padStart(2, '0');
    const traceparent = `00-${span.traceId.toLowerCase()}-${span.spanId.toLowerCase()}-${flags}`;
    return TRACEPARENT.test(traceparent) ? { traceparent, tracestate: boundedTraceState(span) } : null;
  } catch {
    return null;
  }
}

/**
 * The valid members of a span's tracestate, in order, as many as fit in MAX_TRACESTATE
 * characters and MAX_MEMBERS (those past it go: the oldest, by W3C's ordering). A member that is
 * not W3C's (the API's TraceState.set takes any text), or repeats a key, is dropped; so is a
 * tracestate whose serialize() throws.
 */
function boundedTraceState(span: SpanContext): string | null {
  let text: unknown;
  try {
    text = span.traceState?.serialize();
  } catch {
    return null;
  }
  if (typeof text !== 'string' || text === '') return null;
  const pieces = text.slice(0, SCANNED_TRACESTATE).split(',');
  if (text.length > SCANNED_TRACESTATE) pieces.pop();
  const kept: string[] = [];
  const keys = new Set<string>();
  let length = -1;
  for (const piece of pieces) {
    const member = piece.replace(/^[ \t]+|[ \t]+$/g, '');
    const eq = member.indexOf('=');
    const key = member.slice(0, eq);
    if (eq <= 0 || !MEMBER_KEY.test(key) || !MEMBER_VALUE.test(member.slice(eq + 1)) || keys.has(key)) continue;
    if (kept.length === MAX_MEMBERS || length + 1 + member.length > MAX_TRACESTATE) break;
    kept.push(member);
    keys.add(key);
    length += 1 + member.length;
  }
  return kept.length === 0 ? null : kept.join(',');
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
