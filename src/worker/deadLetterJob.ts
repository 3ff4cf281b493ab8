import type { Executor } from '../db/executor.ts';
import { withTransaction } from '../db/transaction.ts';
import type { Tables } from '../db/tables.ts';
import { ClaimLostError } from '../errors.ts';

/**
 * Params: ?1 retry_times to record, ?2 max_retries in force, ?3 last error, ?4 id, ?5 lockId.
 * Copies the claimed job into dead_jobs. affectedRows 1, or 0 if the claim was lost.
 */
const sqlCopyToDead = (t: Tables) => `
INSERT INTO ${t.deadJobs} (id, queue, name, payload, priority, retry_times, max_retries, batch_id, idempotency_key, last_error, created_at, failed_at)
SELECT id, queue, name, payload, priority, ?, ?, batch_id, idempotency_key, ?, created_at, NOW(3)
FROM ${t.jobs}
WHERE id = ?
  AND lock_id = ?`;

/** Params: ?1 id, ?2 lockId. affectedRows 1, or 0 if the claim was lost. */
const sqlDeleteClaimed = (t: Tables) => `
DELETE FROM ${t.jobs}
WHERE id = ?
  AND lock_id = ?`;

/**
 * Moves a claimed job to dead_jobs in one transaction, fenced: if the claim was lost between the
 * copy and the delete, the transaction rolls back and nothing moves.
 */
export async function deadLetterJob(
  db: Executor,
  tables: Tables,
  job: { id: number; lockId: string; retryTimes: number; maxRetries: number },
  lastError: string,
): Promise<void> {
  await withTransaction(db, async (tx) => {
    const copied = await tx.write(sqlCopyToDead(tables), [job.retryTimes, job.maxRetries, lastError, job.id, job.lockId]);
    if (copied.affectedRows !== 1) throw new ClaimLostError('dead-letter', job.lockId, [job.id], 1);
    const deleted = await tx.write(sqlDeleteClaimed(tables), [job.id, job.lockId]);
    if (deleted.affectedRows !== 1) throw new ClaimLostError('dead-letter', job.lockId, [job.id], 1);
  });
}
