import type { Tables } from '../db/tables.ts';
import { SLUICE_DEFAULTS } from '../options.ts';
import type { MaintenanceTask, TaskDb } from '../task/MaintenanceTask.ts';
import { type ResolvedRetentionOptions, type RetentionOptions, RetentionTask } from '../task/pruneInBatches.ts';

/**
 * Params: ?1 retention in microseconds, ?2 batch size. Locks one bounded batch of dead jobs past
 * their retention, oldest first (ix_failed), skipping rows another transaction holds and dead
 * parents whose children are not settled yet (a pending edge: job_edges' primary key prefix) —
 * reconcileHolds settles those from the dead row, which must still be there. Returns ids, and
 * which have a payload stored apart.
 */
const sqlLockExpired = (t: Tables) => `
SELECT d.id, d.payload = '' AS apart
FROM ${t.deadJobs} d
WHERE d.failed_at < NOW(3) - INTERVAL ? MICROSECOND
  AND NOT EXISTS (SELECT 1 FROM ${t.jobEdges} e WHERE e.parent_id = d.id AND e.parent_outcome IS NULL)
ORDER BY d.failed_at
LIMIT ?
FOR UPDATE SKIP LOCKED`;

/** Params: ?1 ids (list, locked). affectedRows = rows deleted. */
const sqlDelete = (t: Tables) => `
DELETE FROM ${t.deadJobs}
WHERE id IN (?)`;

/** Params: ?1 job ids (list, locked). Deletes the payloads stored apart of the rows pruned with them. */
const sqlDeletePayloads = (t: Tables) => `
DELETE FROM ${t.jobPayloads}
WHERE job_id IN (?)`;

/**
 * dead_jobs retention: dead jobs older than deadRetentionMs, deleted a bounded batch at a time; a dead
 * parent whose children are not settled yet waits for reconcileHolds (a pass or two) first.
 */
export function pruneDeadJobs(
  { db, tables }: TaskDb,
  options: RetentionOptions = {},
): MaintenanceTask<'pruneDeadJobs', 'pruned', ResolvedRetentionOptions> {
  const statements = {
    lock: sqlLockExpired(tables),
    delete: sqlDelete(tables),
    keyOf: (r: Record<string, unknown>) => r.id,
    alsoDelete: {
      sql: sqlDeletePayloads(tables),
      keysOf: (rows: readonly Record<string, unknown>[]) => rows.filter((r) => Number(r.apart) === 1).map((r) => r.id),
    },
  };
  return new RetentionTask('pruneDeadJobs', db, statements, options, SLUICE_DEFAULTS.deadRetentionMs);
}
