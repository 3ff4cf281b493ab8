import type { Tables } from '../db/tables.ts';
import type { MaintenanceTask, TaskDb } from '../task/MaintenanceTask.ts';
import { historyBoundTask, type ResolvedRetentionOptions, type RetentionOptions } from '../task/pruneInBatches.ts';

/**
 * Params: ?1 retention in microseconds, ?2 batch size. Locks one bounded batch of progress rows
 * last written before the retention, oldest first (ix_updated), of jobs no longer live (one
 * primary-key probe each: a long job that reports rarely keeps its row), skipping rows another
 * transaction holds. Returns job ids.
 */
const sqlLockExpired = (t: Tables) => `
SELECT p.job_id
FROM ${t.jobProgress} p
WHERE p.updated_at < NOW(3) - INTERVAL ? MICROSECOND
  AND NOT EXISTS (SELECT 1 FROM ${t.jobs} j WHERE j.id = p.job_id)
ORDER BY p.updated_at
LIMIT ?
FOR UPDATE SKIP LOCKED`;

/** Params: ?1 job ids (list, locked). affectedRows = rows deleted. */
const sqlDelete = (t: Tables) => `
DELETE FROM ${t.jobProgress}
WHERE job_id IN (?)`;

/**
 * job_progress retention: a finished job's last progress stays visible (jobs.get) as long as its
 * history row, then goes, a bounded batch at a time. Pass the history retention; with none (0),
 * a finished job's progress goes at the next pass.
 */
export function pruneProgress(
  { db, tables }: TaskDb,
  options: RetentionOptions = {},
): MaintenanceTask<'pruneProgress', 'pruned', ResolvedRetentionOptions> {
  const statements = {
    lock: sqlLockExpired(tables),
    delete: sqlDelete(tables),
    keyOf: (r: Record<string, unknown>) => r.job_id,
  };
  return historyBoundTask('pruneProgress', db, statements, options);
}
