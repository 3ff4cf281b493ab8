import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';
import type { StoredTraceContext } from '../model/storedTraceContext.ts';

/**
 * Params: ?1 the batch's id, ?2 traceparent, ?3 tracestate (or NULL), then ?2 and ?3 again. Keeps
 * the context every job of one batch was enqueued under: one row however large the batch (a job
 * enqueued alone carries its own in its row: jobs.traceparent). A row left by an earlier batch of
 * the same id (an id the server handed out again after its table was emptied) is overwritten,
 * never an error that fails the enqueue. affectedRows 1 (2 when it overwrote).
 */
const sqlWrite = (t: Tables) => `
INSERT INTO ${t.jobTraces} (kind, id, traceparent, tracestate, created_at)
VALUES ('batch', ?, ?, ?, NOW(3))
ON DUPLICATE KEY UPDATE traceparent = ?, tracestate = ?, created_at = NOW(3)`;

/** Inside the batch's transaction: the jobs and their trace context commit together. */
export async function writeBatchTraceContext(
  tx: Executor,
  tables: Tables,
  batchId: number,
  stored: StoredTraceContext,
): Promise<void> {
  const { traceparent, tracestate } = stored;
  await tx.write(sqlWrite(tables), [batchId, traceparent, tracestate, traceparent, tracestate]);
}
