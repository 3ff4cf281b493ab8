import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';
import type { StoredTraceContext } from './traceContext.ts';

/**
 * Params: ?1 kind ('job' or 'batch'), ?2 its id, ?3 traceparent, ?4 tracestate (or NULL), then ?3
 * and ?4 again. Keeps the context one job, or every job of one batch, was enqueued under: one row
 * however large the batch. A row left by an earlier job or batch of the same id (an id the server
 * handed out again after its table was emptied) is overwritten, never an error that fails the
 * enqueue. affectedRows 1 (2 when it overwrote).
 */
const sqlWrite = (t: Tables) => `
INSERT INTO ${t.jobTraces} (kind, id, traceparent, tracestate, created_at)
VALUES (?, ?, ?, ?, NOW(3))
ON DUPLICATE KEY UPDATE traceparent = ?, tracestate = ?, created_at = NOW(3)`;

/**
 * Params: per row ?1 job id, ?2 traceparent, ?3 tracestate (or NULL), `rows` times. The contexts of
 * several single jobs written in one transaction (EnqueueCoalescer), one row each; a row left by an
 * earlier job of the same id is overwritten as sqlWrite does (VALUES(): both servers read it, MySQL
 * 8.0.20+ with a deprecation note).
 */
const sqlWriteJobs = (t: Tables, rows: number) => `
INSERT INTO ${t.jobTraces} (kind, id, traceparent, tracestate, created_at)
VALUES ${Array.from({ length: rows }, () => "('job', ?, ?, ?, NOW(3))").join(', ')}
ON DUPLICATE KEY UPDATE traceparent = VALUES(traceparent), tracestate = VALUES(tracestate), created_at = NOW(3)`;

/** Inside the enqueue's transaction: the jobs and their trace context commit together. */
export async function writeTraceContext(
  tx: Executor,
  tables: Tables,
  owner: { readonly jobId: number } | { readonly batchId: number },
  stored: StoredTraceContext,
): Promise<void> {
  const { traceparent, tracestate } = stored;
  const [kind, id] = 'jobId' in owner ? ['job', owner.jobId] : ['batch', owner.batchId];
  await tx.write(sqlWrite(tables), [kind, id, traceparent, tracestate, traceparent, tracestate]);
}

/**
 * Inside the transaction that wrote the jobs: the context of each, one statement for all (at most a
 * few hundred bytes a row; the caller bounds the rows, EnqueueCoalescer's MAX_ROWS).
 */
export async function writeJobTraceContexts(
  tx: Executor,
  tables: Tables,
  rows: readonly { readonly jobId: number; readonly stored: StoredTraceContext }[],
): Promise<void> {
  if (rows.length === 0) return;
  const values: unknown[] = [];
  for (const { jobId, stored } of rows) values.push(jobId, stored.traceparent, stored.tracestate);
  await tx.write(sqlWriteJobs(tables, rows.length), values);
}
