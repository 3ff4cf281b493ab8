import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';
import type { StoredTraceContext } from './traceContext.ts';

/**
 * Params: ?1 job id, ?2 traceparent, ?3 tracestate (or NULL), then ?2 and ?3 again. Keeps the
 * context one job was enqueued under. A row left by an earlier job of the same id (an id the
 * server handed out again after its jobs table was emptied) is overwritten, never an error that
 * fails the enqueue. affectedRows 1 (2 when it overwrote).
 */
const sqlWriteOne = (t: Tables) => `
INSERT INTO ${t.jobTraces} (job_id, traceparent, tracestate, created_at)
VALUES (?, ?, ?, NOW(3))
ON DUPLICATE KEY UPDATE traceparent = ?, tracestate = ?, created_at = NOW(3)`;

/**
 * Params: ?1 traceparent, ?2 tracestate (or NULL), ?3 batch id, then ?1 and ?2 again. The same
 * context for every job of one batch, in one statement that reads the batch's own rows (ix_batch;
 * written by this transaction, so invisible to everyone else and locked already) rather than a
 * list of ids or an insertId range. affectedRows = the batch's jobs (more if some overwrote).
 */
const sqlWriteBatch = (t: Tables) => `
INSERT INTO ${t.jobTraces} (job_id, traceparent, tracestate, created_at)
SELECT id, ?, ?, NOW(3)
FROM ${t.jobs}
WHERE batch_id = ?
ON DUPLICATE KEY UPDATE traceparent = ?, tracestate = ?, created_at = NOW(3)`;

/** Inside the enqueue's transaction: the job and its trace context commit together. */
export async function writeJobTraceContext(
  tx: Executor,
  tables: Tables,
  jobId: number,
  stored: StoredTraceContext,
): Promise<void> {
  const { traceparent, tracestate } = stored;
  await tx.write(sqlWriteOne(tables), [jobId, traceparent, tracestate, traceparent, tracestate]);
}

/** Inside the batch's transaction, once its jobs are written. */
export async function writeBatchTraceContext(
  tx: Executor,
  tables: Tables,
  batchId: number,
  stored: StoredTraceContext,
): Promise<void> {
  const { traceparent, tracestate } = stored;
  await tx.write(sqlWriteBatch(tables), [traceparent, tracestate, batchId, traceparent, tracestate]);
}
