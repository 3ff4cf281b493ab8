import type { Tables } from '../db/tables.ts';
import type { MaintenanceTask, TaskDb } from '../task/MaintenanceTask.ts';
import { type RetentionOptions, retentionTask } from '../task/pruneInBatches.ts';

/**
 * Params: ?1 retention in microseconds, ?2 batch size. Locks one bounded batch of dead jobs past
 * their retention, oldest first (ix_failed), skipping rows another transaction holds. Returns ids.
 */
const sqlLockExpired = (t: Tables) => `
SELECT id
FROM ${t.deadJobs}
WHERE failed_at < NOW(3) - INTERVAL ? MICROSECOND
ORDER BY failed_at
LIMIT ?
FOR UPDATE SKIP LOCKED`;

/** Params: ?1 ids (list, locked). affectedRows = rows deleted. */
const sqlDelete = (t: Tables) => `
DELETE FROM ${t.deadJobs}
WHERE id IN (?)`;

/** dead_jobs retention: dead jobs older than deadRetentionMs, deleted a bounded batch at a time. */
export function pruneDeadJobs(
  { db, tables }: TaskDb,
  options: RetentionOptions,
): MaintenanceTask<'pruneDeadJobs', 'pruned'> {
  return retentionTask(
    'pruneDeadJobs',
    db,
    { lock: sqlLockExpired(tables), delete: sqlDelete(tables), keyOf: (r) => r.id },
    options,
  );
}
