import type { Tables } from '../db/tables.ts';
import type { MaintenanceTask, TaskDb } from '../task/MaintenanceTask.ts';
import { type RetentionOptions, retentionTask } from '../task/pruneInBatches.ts';

/**
 * Params: ?1 retention in microseconds, ?2 batch size. Locks one bounded batch of trace contexts
 * written before the retention, oldest first (ix_created), of jobs no longer live (one
 * primary-key probe each: a job that waits long keeps its context), skipping rows another
 * transaction holds. Returns job ids.
 */
const sqlLockExpired = (t: Tables) => `
SELECT c.job_id
FROM ${t.jobTraces} c
WHERE c.created_at < NOW(3) - INTERVAL ? MICROSECOND
  AND NOT EXISTS (SELECT 1 FROM ${t.jobs} j WHERE j.id = c.job_id)
ORDER BY c.created_at
LIMIT ?
FOR UPDATE SKIP LOCKED`;

/** Params: ?1 job ids (list, locked). affectedRows = rows deleted. */
const sqlDelete = (t: Tables) => `
DELETE FROM ${t.jobTraces}
WHERE job_id IN (?)`;

/**
 * job_traces retention: a finished job's trace context goes with its history row (pass the
 * history retention; with none, at the next pass), a bounded batch at a time.
 */
export function pruneTraceContexts(
  { db, tables }: TaskDb,
  options: RetentionOptions,
): MaintenanceTask<'pruneTraceContexts', 'pruned'> {
  const resolved = { ...options, retentionMs: Math.max(1, options.retentionMs) };
  const statements = {
    lock: sqlLockExpired(tables),
    delete: sqlDelete(tables),
    keyOf: (r: Record<string, unknown>) => r.job_id,
  };
  return retentionTask('pruneTraceContexts', db, statements, resolved);
}
