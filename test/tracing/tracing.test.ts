import { type Span, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { beforeEach, describe, expect, it } from 'vitest';
import { defineJob, PermanentJobError } from '../../src/index.ts';
import { insertJob } from '../helpers/factory.ts';
import { useInMemoryTracing } from '../helpers/inMemoryTracing.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';
import { waitFor } from '../helpers/waitFor.ts';
import { recordEvents, withWorker } from '../helpers/workerHarness.ts';

/**
 * Tracing in one process, with the SDK's in-memory exporter: an enqueue or a batch is a PRODUCER
 * span whose context its jobs keep (a single job in its row, a batch in job_traces); each attempt is a CONSUMER span linked to it,
 * with the handler's spans as its children and its outcome as an attribute; the rows are pruned
 * with the history. (Across processes and retries: test/process/tracing.test.ts; with no SDK:
 * withoutSdk.test.ts.)
 */
const db = useTestDatabase('tracing');
const exporter = useInMemoryTracing();
const test = trace.getTracer('test');

beforeEach(() => exporter.reset());

/** Runs `fn` inside a SERVER span, as an HTTP request handler would. */
async function inRequest<T>(fn: () => Promise<T>): Promise<{ value: T; request: Span }> {
  return test.startActiveSpan('GET /orders', { kind: SpanKind.SERVER }, async (request) => {
    try {
      return { value: await fn(), request };
    } finally {
      request.end();
    }
  });
}

function spansNamed(name: string): ReadableSpan[] {
  return exporter.getFinishedSpans().filter((s) => s.name === name);
}

function only(name: string): ReadableSpan {
  const spans = spansNamed(name);
  expect(spans.map((s) => s.name)).toEqual([name]);
  return spans[0] as ReadableSpan;
}

async function traceRows(): Promise<{ kind: string; id: number; traceparent: string; tracestate: string | null }[]> {
  const rows = await db.query<{ kind: string; id: number | string; traceparent: string; tracestate: string | null }>(
    `SELECT 'job' AS kind, id, traceparent, tracestate FROM sluice_jobs WHERE traceparent IS NOT NULL
     UNION ALL SELECT kind, id, traceparent, tracestate FROM sluice_job_traces ORDER BY kind DESC, id`,
  );
  return rows.map((r) => ({ ...r, id: Number(r.id) }));
}

function traceparentOf(span: ReadableSpan): string {
  const { traceId, spanId } = span.spanContext();
  return `00-${traceId}-${spanId}-01`;
}

describe('enqueue', () => {
  it('is a PRODUCER span under the request, and the job keeps its context', async () => {
    const { value, request } = await inRequest(() => db.sluice.enqueue({ name: 'mail', queue: 'orders' }));
    const send = only('send orders');
    expect(send.kind).toBe(SpanKind.PRODUCER);
    expect(send.parentSpanContext?.spanId).toBe(request.spanContext().spanId);
    expect(send.spanContext().traceId).toBe(request.spanContext().traceId);
    expect(send.attributes).toEqual({
      'messaging.system': 'sluice',
      'messaging.operation.type': 'send',
      'messaging.operation.name': 'send',
      'messaging.destination.name': 'orders',
      'messaging.message.id': String(value.id),
      'messaging.sluice.job.name': 'mail',
    });
    expect(await traceRows()).toEqual([
      { kind: 'job', id: value.id, traceparent: traceparentOf(send), tracestate: null },
    ]);
  });

  it("keeps a job's context in its row whichever way it is written: prepared, in a caller's transaction, with a key", async () => {
    const { value } = await inRequest(async () => [
      await db.sluice.enqueue({ name: 'plain', queue: 'orders' }),
      await db.sluice.knex.transaction((trx) => db.sluice.enqueue({ name: 'in-trx', queue: 'orders' }, { trx })),
      await db.sluice.enqueue({ name: 'keyed', queue: 'orders', idempotencyKey: 'k-1' }),
    ]);
    const sends = spansNamed('send orders');
    expect(sends).toHaveLength(3);
    const byId = new Map(sends.map((s) => [Number(s.attributes['messaging.message.id']), traceparentOf(s)]));
    expect(await traceRows()).toEqual(
      value.map(({ id }) => ({ kind: 'job', id, traceparent: byId.get(id), tracestate: null })),
    );
  });

  it('a batch is one span, and one row carries its context for every job of it', async () => {
    const { value } = await inRequest(() =>
      db.sluice.enqueueBatch([
        { name: 'a', queue: 'orders' },
        { name: 'b', queue: 'orders' },
        { name: 'c', queue: 'orders' },
      ]),
    );
    const send = only('send orders');
    expect(send.attributes).toMatchObject({
      'messaging.destination.name': 'orders',
      'messaging.batch.message_count': 3,
      'messaging.sluice.batch.id': value.batchId,
    });
    expect(await traceRows()).toEqual([
      { kind: 'batch', id: value.batchId, traceparent: traceparentOf(send), tracestate: null },
    ]);
  });

  it('a batch over several queues names none; a failed enqueue is an error span and writes nothing', async () => {
    await db.sluice.enqueueBatch([
      { name: 'a', queue: 'q1' },
      { name: 'b', queue: 'q2' },
    ]);
    expect(only('send').attributes['messaging.destination.name']).toBeUndefined();
    exporter.reset();
    await db.query('TRUNCATE TABLE sluice_job_traces');
    await expect(
      db.sluice.enqueueBatch([
        { name: 'ok', queue: 'q1' },
        { name: 'bad name!', queue: 'q1' },
      ]),
    ).rejects.toThrow(/job 1/);
    const failed = only('send q1');
    expect(failed.status.code).toBe(SpanStatusCode.ERROR);
    expect(failed.attributes['error.type']).toBe('SLUICE_JOB_INVALID');
    expect(await traceRows()).toEqual([]);
  });

  it('a duplicate idempotency key writes no second context', async () => {
    const first = await db.sluice.enqueue({ name: 'once', idempotencyKey: 'k1' });
    const again = await db.sluice.enqueue({ name: 'once', idempotencyKey: 'k1' });
    expect(again).toEqual({ id: first.id, duplicate: true });
    expect(spansNamed('send default').map((s) => s.attributes['messaging.sluice.job.duplicate'])).toEqual([
      undefined,
      true,
    ]);
    expect((await traceRows()).map((r) => r.id)).toEqual([first.id]);
  });
});

describe('attempts', () => {
  it('each is a CONSUMER root span linked to the enqueue, with the handler inside it', async () => {
    const sluice = db.open();
    const events = recordEvents(sluice);
    const flaky = defineJob({
      name: 'flaky',
      async handle(_payload, ctx) {
        await test.startActiveSpan('charge card', async (span) => span.end());
        if (ctx.job.retryTimes === 0) throw new Error('card declined');
      },
    });
    const { value } = await inRequest(() =>
      sluice.enqueue({ name: 'flaky', queue: 'pay', backoff: { type: 'fixed', delayMs: 10 } }),
    );
    const send = only('send pay');
    await withWorker(sluice, [flaky], { queues: ['pay'] }, async () => {
      await waitFor(() => events['job:completed'].length === 1, { what: 'the retry to succeed' });
    });
    const attempts = spansNamed('process pay');
    expect(attempts.map((s) => s.attributes['messaging.sluice.job.outcome'])).toEqual(['retried', 'succeeded']);
    for (const [i, attempt] of attempts.entries()) {
      expect(attempt.kind).toBe(SpanKind.CONSUMER);
      expect(attempt.parentSpanContext).toBeUndefined();
      expect(attempt.links.map((l) => [l.context.traceId, l.context.spanId])).toEqual([
        [send.spanContext().traceId, send.spanContext().spanId],
      ]);
      expect(attempt.attributes).toMatchObject({
        'messaging.system': 'sluice',
        'messaging.operation.type': 'process',
        'messaging.destination.name': 'pay',
        'messaging.message.id': String(value.id),
        'messaging.sluice.job.name': 'flaky',
        'messaging.sluice.job.attempt': i + 1,
        'messaging.sluice.job.delivery': 'at-least-once',
      });
      const handlerSpan = spansNamed('charge card').find(
        (s) => s.spanContext().traceId === attempt.spanContext().traceId,
      );
      expect(handlerSpan?.parentSpanContext?.spanId).toBe(attempt.spanContext().spanId);
    }
    expect(attempts[0]?.status).toMatchObject({ code: SpanStatusCode.ERROR, message: 'card declined' });
    expect(attempts[0]?.attributes['error.type']).toBe('Error');
    expect(attempts[1]?.status.code).toBe(SpanStatusCode.UNSET);
  });

  it('records dead and exactly-once outcomes; a batch job links by its batch, one enqueued untraced has no link', async () => {
    const sluice = db.open();
    const events = recordEvents(sluice);
    const refused = defineJob({
      name: 'refused',
      handle: () => {
        throw new PermanentJobError('no such customer');
      },
    });
    const booked = defineJob({ name: 'booked', delivery: 'exactly-once', handle: async () => undefined });
    await sluice.enqueueBatch([{ name: 'refused', queue: 'ops' }]);
    const batchSend = only('send ops');
    await insertJob(db, { queue: 'ops', name: 'booked' });
    await withWorker(sluice, [refused, booked], { queues: ['ops'] }, async () => {
      await waitFor(() => events['job:dead'].length === 1 && events['job:completed'].length === 1, {
        what: 'both jobs to finish',
      });
    });
    const byName = new Map(spansNamed('process ops').map((s) => [s.attributes['messaging.sluice.job.name'], s]));
    expect(byName.get('refused')?.attributes).toMatchObject({
      'messaging.sluice.job.outcome': 'dead',
      'error.type': 'SLUICE_PERMANENT',
    });
    // A batch's job finds its context by its batch id.
    expect(byName.get('refused')?.links.map((l) => l.context.spanId)).toEqual([batchSend.spanContext().spanId]);
    expect(byName.get('booked')?.attributes).toMatchObject({
      'messaging.sluice.job.outcome': 'succeeded',
      'messaging.sluice.job.delivery': 'exactly-once',
    });
    expect(byName.get('booked')?.links).toEqual([]);
  });
});

describe('pruneTraceContexts', () => {
  it('removes contexts past the retention none of whose jobs lives, a job’s or a batch’s', async () => {
    const live = await insertJob(db, {});
    await insertJob(db, { batchId: 41 });
    const tp = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    await db.query(
      `INSERT INTO sluice_job_traces (kind, id, traceparent, created_at) VALUES
         ('job', ?, ?, NOW(3) - INTERVAL 2 DAY),
         ('job', 999999, ?, NOW(3) - INTERVAL 2 DAY),
         ('job', 999998, ?, NOW(3)),
         ('batch', 41, ?, NOW(3) - INTERVAL 2 DAY),
         ('batch', 42, ?, NOW(3) - INTERVAL 2 DAY)`,
      [live, tp, tp, tp, tp, tp],
    );
    const pass = await db.sluice.maintenance({ jitterMs: 0 }).runOnce();
    expect(pass.tasks.pruneTraceContexts).toEqual({ pruned: 2 });
    expect((await traceRows()).map((r) => `${r.kind} ${r.id}`)).toEqual([`job ${live}`, 'job 999998', 'batch 41']);
  });
});
