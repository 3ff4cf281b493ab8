import type { Executor } from '../../db/executor.ts';
import type { Tables } from '../../db/tables.ts';
import { JOB_ROW_COLUMNS, type JobRow } from '../../job.ts';

/**
 * Params: ?1 ids (list), ?2 lockId. Returns the rows of those ids that this claim holds — exactly
 * the rows its claim statement changed, since the lockId is unique to that statement. A plain
 * read (re-run by the Executor after a transient conflict).
 */
const sqlLoadClaimed = (t: Tables) => `
SELECT ${JOB_ROW_COLUMNS}
FROM ${t.jobs}
WHERE id IN (?)
  AND lock_id = ?
ORDER BY priority, run_at, id`;

export function loadClaimedJobs(
  db: Executor,
  tables: Tables,
  ids: readonly number[],
  lockId: string,
): Promise<JobRow[]> {
  return db.select<JobRow>(sqlLoadClaimed(tables), [ids, lockId]);
}
