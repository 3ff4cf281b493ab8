import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { context, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { afterAll, describe, expect, it } from 'vitest';
import { useInMemoryTracing } from '../helpers/inMemoryTracing.ts';
import { spawnWorker } from '../helpers/spawnSluice.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';

/**
 * One request's trace across processes: an HTTP-like SERVER span here enqueues a job (in-memory
 * exporter); a real `sluice work` process, with an SDK registered through NODE_OPTIONS that writes
 * its spans to a file, runs it — two failed attempts and a success. Every attempt is its own root
 * CONSUMER span, linked to this process's PRODUCER span, with its attempt number and outcome; the
 * handler's span is a child of its attempt's.
 */
const db = useTestDatabase('process_tracing');
const REGISTER = fileURLToPath(new URL('../fixtures/tracing/writeSpansToFile.mjs', import.meta.url));
const exporter = useInMemoryTracing();
const spanDir = mkdtempSync(join(tmpdir(), 'sluice-spans-'));

interface FileSpan {
  readonly name: string;
  readonly kind: number;
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId: string | null;
  readonly links: { traceId: string; spanId: string }[];
  readonly attributes: Record<string, unknown>;
  readonly status: { code: number; message?: string };
  readonly pid: number;
}

afterAll(() => {
  rmSync(spanDir, { recursive: true, force: true });
});

describe('a trace across processes', () => {
  it('links every attempt of a retried job, in a worker process, to the request that enqueued it', async () => {
    const spanFile = join(spanDir, 'worker.jsonl');
    const request = trace.getTracer('test').startSpan('POST /orders', { kind: SpanKind.SERVER });
    const { id } = await context.with(trace.setSpan(context.active(), request), () =>
      db.sluice.enqueue({
        name: 'tracedFlaky',
        queue: 'traced',
        maxRetries: 3,
        backoff: { type: 'fixed', delayMs: 20 },
      }),
    );
    request.end();
    const send = exporter.getFinishedSpans().find((s) => s.name === 'send traced');
    expect(send?.parentSpanContext?.spanId).toBe(request.spanContext().spanId);

    const worker = spawnWorker(
      db.url,
      { queues: 'traced', pollIntervalMs: 50, maxPollIntervalMs: 200 },
      {
        logLevel: 'info',
        env: {
          NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import=${REGISTER}`.trim(),
          SLUICE_TEST_SPAN_FILE: spanFile,
        },
      },
    );
    await worker.ready;
    await db.sluice.jobs.waitFor(id, { timeoutMs: 60_000 });
    expect(await worker.stop()).toEqual({ code: 0, signal: null });

    const spans = readFileSync(spanFile, 'utf8')
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as FileSpan);
    const attempts = spans.filter((s) => s.name === 'process traced');
    expect(
      attempts.map((s) => [s.attributes['messaging.sluice.job.attempt'], s.attributes['messaging.sluice.job.outcome']]),
    ).toEqual([
      [1, 'retried'],
      [2, 'retried'],
      [3, 'succeeded'],
    ]);
    const sent = send?.spanContext();
    for (const attempt of attempts) {
      expect(attempt.pid).toBe(worker.pid);
      expect(attempt.kind).toBe(SpanKind.CONSUMER);
      expect(attempt.parentSpanId).toBeNull();
      expect(attempt.links).toEqual([{ traceId: request.spanContext().traceId, spanId: sent?.spanId }]);
      expect(attempt.attributes).toMatchObject({
        'messaging.system': 'sluice',
        'messaging.operation.type': 'process',
        'messaging.destination.name': 'traced',
        'messaging.message.id': String(id),
        'messaging.sluice.job.name': 'tracedFlaky',
        'messaging.sluice.job.delivery': 'at-least-once',
      });
      const work = spans.filter((s) => s.name === 'flaky work' && s.parentSpanId === attempt.spanId);
      expect(work.map((s) => s.traceId)).toEqual([attempt.traceId]);
    }
    expect(new Set(attempts.map((s) => s.traceId)).size).toBe(3);
    expect(attempts.map((s) => s.status.code)).toEqual([
      SpanStatusCode.ERROR,
      SpanStatusCode.ERROR,
      SpanStatusCode.UNSET,
    ]);
    expect(attempts[0]?.status.message).toBe('flaky: attempt 1 fails');
  });
});
