import type { Tables } from '../db/tables.ts';
import type { MaintenanceTask, TaskDb } from '../task/MaintenanceTask.ts';
import { historyBoundTask, type ResolvedRetentionOptions, type RetentionOptions } from '../task/pruneInBatches.ts';

/**
 * Params: ?1 retention in microseconds, ?2 batch size. Locks one bounded batch of finished
 * children's kept edges past the retention, oldest first (ix_finished), skipping rows another
 * transaction holds. Returns child ids (a child's edges all finished together).
 */
const sqlLockExpired = (t: Tables) => `
SELECT child_id
FROM ${t.jobGraphHistory}
WHERE finished_at < NOW(3) - INTERVAL ? MICROSECOND
ORDER BY finished_at
LIMIT ?
FOR UPDATE SKIP LOCKED`;

/** Params: ?1 child ids (list, locked). affectedRows = edges deleted. */
const sqlDelete = (t: Tables) => `
DELETE FROM ${t.jobGraphHistory}
WHERE child_id IN (?)`;

/**
 * job_graph_history retention: a finished workflow's graph stays drawable as long as its jobs'
 * history rows are kept (pass the history retention), then its edges go, a bounded batch at a time.
 */
export function pruneGraphHistory(
  { db, tables }: TaskDb,
  options: RetentionOptions = {},
): MaintenanceTask<'pruneGraphHistory', 'pruned', ResolvedRetentionOptions> {
  const statements = {
    lock: sqlLockExpired(tables),
    delete: sqlDelete(tables),
    keyOf: (r: Record<string, unknown>) => r.child_id,
  };
  return historyBoundTask('pruneGraphHistory', db, statements, options);
}
