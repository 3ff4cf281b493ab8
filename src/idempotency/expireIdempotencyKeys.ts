import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';

/**
 * Params: ?1 retention in microseconds, ?2 job ids (list). Starts the retention clock of the keys
 * held by jobs that just finished (completed or dead). affectedRows = keys updated.
 */
const sqlExpire = (t: Tables) => `
UPDATE ${t.idempotencyKeys}
SET expires_at = NOW(3) + INTERVAL ? MICROSECOND
WHERE job_id IN (?)
  AND expires_at IS NULL`;

/**
 * Called for finished jobs that carried an idempotency key. If this write is lost (a crash right
 * after the finish), the maintenance pass finds the orphaned key and expires it.
 */
export async function expireIdempotencyKeys(
  db: Executor,
  tables: Tables,
  jobIds: readonly number[],
  retentionMs: number,
): Promise<void> {
  if (jobIds.length === 0) return;
  await db.write(sqlExpire(tables), [retentionMs * 1000, jobIds]);
}
