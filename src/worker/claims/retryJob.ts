import type { Executor } from '../../db/executor.ts';
import type { Tables } from '../../db/tables.ts';
import { ClaimLostError } from '../../errors.ts';

/**
 * Params: ?1 delay in microseconds, ?2 last error, ?3 id, ?4 lockId. Releases a failed job for a
 * later attempt: free again, retry_times + 1, not before NOW(3) + delay. Returns affectedRows 1,
 * or 0 if the claim was lost. Autocommit: re-run by the Executor after a transient conflict.
 */
const sqlRetry = (t: Tables) => `
UPDATE ${t.jobs}
SET lock_id = '',
    locked_at = DEFAULT,
    retry_times = retry_times + 1,
    run_at = NOW(3) + INTERVAL ? MICROSECOND,
    last_error = ?
WHERE id = ?
  AND lock_id = ?`;

/** Fenced release with backoff after a failed attempt; throws ClaimLostError if the claim was lost. */
export async function retryJob(
  db: Executor,
  tables: Tables,
  job: { id: number; lockId: string },
  delayMs: number,
  lastError: string,
): Promise<void> {
  const { affectedRows } = await db.write(sqlRetry(tables), [
    Math.round(delayMs * 1000),
    lastError,
    job.id,
    job.lockId,
  ]);
  if (affectedRows !== 1) throw new ClaimLostError('retry', job.lockId, [job.id], 1);
}
