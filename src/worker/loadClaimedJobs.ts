import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';
import type { JobRow } from '../types.ts';

/**
 * Params: ?1 ids (list), ?2 lockId. Returns the rows of those ids that this claim holds —
 * exactly the rows its claim statement changed, since the lockId is unique to that statement.
 */
const sqlLoadClaimed = (t: Tables) => `
SELECT id, queue, name, payload, priority, run_at, lock_id, retry_times, max_retries, batch_id, idempotency_key, backoff, created_at
FROM ${t.jobs}
WHERE id IN (?)
  AND lock_id = ?
ORDER BY priority, run_at, id`;

export function loadClaimedJobs(db: Executor, tables: Tables, ids: readonly number[], lockId: string): Promise<JobRow[]> {
  return db.select<JobRow>(sqlLoadClaimed(tables), [ids, lockId]);
}
