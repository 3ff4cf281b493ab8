import { describe, expect, it } from 'vitest';
import { useInMemoryTracing } from '../helpers/inMemoryTracing.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';

/**
 * With an SDK registered, single enqueues in flight together share one commit with their trace
 * contexts: one multi-row INSERT, each row carrying its own `send` span's context
 * (jobs.traceparent), as without an SDK (EnqueueCoalescer). It was a transaction of the jobs'
 * INSERT and one of every context: BEGIN, INSERT, INSERT, COMMIT.
 */
const db = useTestDatabase('coalesced_traces');
const exporter = useInMemoryTracing();

describe('single enqueues in flight together, with an SDK', () => {
  it('write their jobs with their trace contexts in one statement, each job its own span’s context', async () => {
    await Promise.all([db.sluice.enqueue({ name: 'warm-up' }), db.sluice.enqueue({ name: 'warm-up' })]);
    exporter.reset();
    const sent: string[] = [];
    const listen = (q: { sql: string }) => {
      if (!/doorbells|@@hostname|processlist/i.test(q.sql)) sent.push(q.sql.trim().split(/[\s;]+/)[0] ?? '');
    };
    db.sluice.knex.on('query', listen);
    let results: { id: number }[];
    try {
      // The calls start together, as from requests in flight at once; each its own `send` span.
      const first = db.sluice.enqueue({ name: 'traced', payload: { n: 0 } });
      await new Promise((resolve) => setImmediate(resolve));
      const rest = Array.from({ length: 30 }, (_, n) => db.sluice.enqueue({ name: 'traced', payload: { n: n + 1 } }));
      results = await Promise.all([first, ...rest]);
    } finally {
      db.sluice.knex.off('query', listen);
    }
    // The first alone (one INSERT), the 30 others in one INSERT: no transaction, no statement of
    // their contexts apart.
    expect(sent.map((s) => s.toUpperCase())).toEqual(['INSERT', 'INSERT']);
    const spans = exporter.getFinishedSpans().filter((s) => s.name === 'send default');
    expect(spans).toHaveLength(31);
    const bySpanId = new Map(spans.map((s) => [s.attributes['messaging.message.id'], s]));
    const rows = await db.query<{ id: number | string; traceparent: string }>(
      'SELECT id, traceparent FROM sluice_jobs WHERE traceparent IS NOT NULL',
    );
    expect(await db.query('SELECT 1 FROM sluice_job_traces')).toEqual([]);
    const traced = new Map(rows.map((r) => [Number(r.id), r.traceparent]));
    for (const { id } of results) {
      const span = bySpanId.get(String(id));
      expect(span, `the span of job ${id}`).toBeDefined();
      const { traceId, spanId } = span?.spanContext() ?? { traceId: '', spanId: '' };
      expect(traced.get(id)).toBe(`00-${traceId}-${spanId}-01`);
    }
  });
});
