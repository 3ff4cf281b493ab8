import {
  context,
  createTraceState,
  ROOT_CONTEXT,
  SpanStatusCode,
  TraceFlags,
  type TraceState,
  trace,
} from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { beforeEach, describe, expect, it } from 'vitest';
import { defineJob } from '../../src/index.ts';
import { ERROR_CODE_BYTES, ERROR_MESSAGE_BYTES, ERROR_STACK_BYTES } from '../../src/model/attemptError.ts';
import { useInMemoryTracing } from '../helpers/inMemoryTracing.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';
import { waitFor } from '../helpers/waitFor.ts';
import { recordEvents, withWorker } from '../helpers/workerHarness.ts';

/**
 * Tracing never breaks or bloats the business write, with the real SDK: whatever trace context an
 * enqueue comes in under (a tracestate the API let through unchecked, one that throws, an
 * upper-case trace id from a hand-made context) the enqueue commits and its job keeps what W3C
 * allows of it; an attempt's error reaches its span within the bounds of a stored error.
 */
const db = useTestDatabase('tracing_hostile');
const exporter = useInMemoryTracing();

beforeEach(() => exporter.reset());

const TRACE_ID = '0af7651916cd43dd8448eb211c80319c';

/** Runs `fn` under a remote parent as a propagator would hand it over: this trace id, this tracestate. */
function underParent<T>(traceId: string, traceState: TraceState | undefined, fn: () => Promise<T>): Promise<T> {
  const parent = trace.setSpanContext(ROOT_CONTEXT, {
    traceId,
    spanId: 'b7ad6b7169203331',
    traceFlags: TraceFlags.SAMPLED,
    isRemote: true,
    ...(traceState ? { traceState } : {}),
  });
  return context.with(parent, fn);
}

async function storedContext(): Promise<{ traceparent: string; tracestate: string | null } | undefined> {
  const [row] = await db.query<{ traceparent: string; tracestate: string | null }>(
    `SELECT traceparent, tracestate FROM sluice_jobs WHERE traceparent IS NOT NULL
     UNION ALL SELECT traceparent, tracestate FROM sluice_job_traces`,
  );
  return row;
}

function spansNamed(name: string): ReadableSpan[] {
  return exporter.getFinishedSpans().filter((s) => s.name === name);
}

describe('an enqueue under a hostile trace context', () => {
  it('commits when a tracestate member is not ASCII: the member is dropped, the others kept', async () => {
    // TraceState.set takes any text; only a parsed header is checked.
    const state = createTraceState('rojo=00f067aa0ba902b7').set('bad', 'caf\u00e9').set('Upper', 'x');
    const { id } = await underParent(TRACE_ID, state, () => db.sluice.enqueue({ name: 'mail', queue: 'orders' }));
    expect(id).toBeGreaterThan(0);
    expect((await storedContext())?.tracestate).toBe('rojo=00f067aa0ba902b7');
    expect(spansNamed('send orders')[0]?.status.code).toBe(SpanStatusCode.UNSET);
  });

  it('commits when the tracestate throws from serialize(): the job keeps its traceparent alone', async () => {
    const throwing = createTraceState('rojo=00f067aa0ba902b7');
    throwing.serialize = () => {
      throw new Error('broken propagator');
    };
    const { count } = await underParent(TRACE_ID, throwing, () =>
      db.sluice.enqueueBatch([
        { name: 'a', queue: 'orders' },
        { name: 'b', queue: 'orders' },
      ]),
    );
    expect(count).toBe(2);
    const stored = await storedContext();
    expect(stored?.traceparent).toMatch(new RegExp(`^00-${TRACE_ID}-[0-9a-f]{16}-01$`));
    expect(stored?.tracestate).toBeNull();
  });

  it('stores an upper-case trace id as W3C writes it, and the attempt links to the enqueue', async () => {
    const sluice = db.open();
    const events = recordEvents(sluice);
    await underParent(TRACE_ID.toUpperCase(), undefined, () => sluice.enqueue({ name: 'linked', queue: 'up' }));
    expect((await storedContext())?.traceparent).toMatch(new RegExp(`^00-${TRACE_ID}-[0-9a-f]{16}-01$`));
    const linked = defineJob({ name: 'linked', handle: async () => undefined });
    await withWorker(sluice, [linked], { queues: ['up'] }, async () => {
      await waitFor(() => events['job:completed'].length === 1, { what: 'the job to complete' });
    });
    const [attempt] = spansNamed('process up');
    expect(attempt?.links.map((l) => l.context.traceId)).toEqual([TRACE_ID]);
  });
});

describe("an attempt's error on its span", () => {
  it('is cut to the bounds of a stored error: 1 MiB thrown, at most 2 KiB of message and 8 KiB of stack', async () => {
    const sluice = db.open();
    const events = recordEvents(sluice);
    const huge = 'x'.repeat(1 << 20);
    const failing = defineJob({
      name: 'huge',
      handle: () => {
        throw Object.assign(new Error(huge), { code: `E_${'Y'.repeat(1 << 20)}` });
      },
    });
    await sluice.enqueue({ name: 'huge', queue: 'big', maxRetries: 0 });
    await withWorker(sluice, [failing], { queues: ['big'] }, async () => {
      await waitFor(() => events['job:dead'].length === 1, { what: 'the job to die' });
    });
    const [attempt] = spansNamed('process big');
    const bytes = (text: unknown) => Buffer.byteLength(String(text ?? ''));
    expect(attempt?.status.code).toBe(SpanStatusCode.ERROR);
    expect(bytes(attempt?.status.message)).toBeLessThanOrEqual(ERROR_MESSAGE_BYTES);
    expect(bytes(attempt?.status.message)).toBeGreaterThan(ERROR_MESSAGE_BYTES / 2);
    expect(bytes(attempt?.attributes['error.type'])).toBeLessThanOrEqual(ERROR_CODE_BYTES);
    const exception = attempt?.events.find((e) => e.name === 'exception')?.attributes ?? {};
    expect(bytes(exception['exception.message'])).toBeLessThanOrEqual(ERROR_MESSAGE_BYTES);
    expect(bytes(exception['exception.stacktrace'])).toBeLessThanOrEqual(ERROR_STACK_BYTES);
    expect(bytes(exception['exception.type'])).toBeLessThanOrEqual(ERROR_CODE_BYTES);
    expect(String(exception['exception.stacktrace'])).toContain('x');
  });
});
