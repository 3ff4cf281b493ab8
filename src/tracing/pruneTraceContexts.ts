import type { Tables } from '../db/tables.ts';
import type { MaintenanceTask, TaskDb } from '../task/MaintenanceTask.ts';
import { historyBoundTask, type ResolvedRetentionOptions, type RetentionOptions } from '../task/pruneInBatches.ts';

/**
 * Params: ?1 retention in microseconds, ?2 batch size. Locks one bounded batch of trace contexts
 * written before the retention, oldest first (ix_created), none of whose jobs is live any more (a
 * job's: one primary-key probe; a batch's: one ix_batch probe), skipping rows another transaction
 * holds. Returns their keys.
 */
const sqlLockExpired = (t: Tables) => `
SELECT c.kind, c.id
FROM ${t.jobTraces} c
WHERE c.created_at < NOW(3) - INTERVAL ? MICROSECOND
  AND CASE c.kind
        WHEN 'job' THEN NOT EXISTS (SELECT 1 FROM ${t.jobs} j WHERE j.id = c.id)
        ELSE NOT EXISTS (SELECT 1 FROM ${t.jobs} j WHERE j.batch_id = c.id)
      END
ORDER BY c.created_at
LIMIT ?
FOR UPDATE SKIP LOCKED`;

/** Params: ?1 (kind, id) pairs (list, locked). affectedRows = rows deleted. */
const sqlDelete = (t: Tables) => `
DELETE FROM ${t.jobTraces}
WHERE (kind, id) IN (?)`;

/**
 * job_traces retention: a context goes once none of its jobs is live and the history retention
 * has passed (pass the history retention; with none, at the next pass), a bounded batch at a time.
 */
export function pruneTraceContexts(
  { db, tables }: TaskDb,
  options: RetentionOptions = {},
): MaintenanceTask<'pruneTraceContexts', 'pruned', ResolvedRetentionOptions> {
  const statements = {
    lock: sqlLockExpired(tables),
    delete: sqlDelete(tables),
    keyOf: (r: Record<string, unknown>) => [r.kind, r.id],
  };
  return historyBoundTask('pruneTraceContexts', db, statements, options);
}
