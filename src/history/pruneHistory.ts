import type { Tables } from '../db/tables.ts';
import type { MaintenanceTask, TaskDb } from '../task/MaintenanceTask.ts';
import { type RetentionOptions, retentionTask } from '../task/pruneInBatches.ts';

/**
 * Params: ?1 retention in microseconds, ?2 batch size. Locks one bounded batch of history past its
 * retention, oldest first (ix_finished), skipping rows another transaction holds. Returns job ids.
 */
const sqlLockExpired = (t: Tables) => `
SELECT job_id
FROM ${t.jobHistory}
WHERE finished_at < NOW(3) - INTERVAL ? MICROSECOND
ORDER BY finished_at
LIMIT ?
FOR UPDATE SKIP LOCKED`;

/** Params: ?1 job ids (list, locked). affectedRows = rows deleted. */
const sqlDelete = (t: Tables) => `
DELETE FROM ${t.jobHistory}
WHERE job_id IN (?)`;

/** job_history retention: completed jobs older than historyRetentionMs, deleted a bounded batch at a time. */
export function pruneHistory(
  { db, tables }: TaskDb,
  options: RetentionOptions,
): MaintenanceTask<'pruneHistory', 'pruned'> {
  return retentionTask(
    'pruneHistory',
    db,
    { lock: sqlLockExpired(tables), delete: sqlDelete(tables), keyOf: (r) => r.job_id },
    options,
  );
}
