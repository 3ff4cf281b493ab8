import type { Tables } from '../db/tables.ts';
import { SLUICE_DEFAULTS } from '../options.ts';
import type { MaintenanceTask, TaskDb } from '../task/MaintenanceTask.ts';
import { type ResolvedRetentionOptions, type RetentionOptions, RetentionTask } from '../task/pruneInBatches.ts';

/**
 * Params: ?1 retention in microseconds, ?2 batch size. Locks one bounded batch of dead jobs past
 * their retention, oldest first (ix_failed), skipping rows another transaction holds. Returns ids,
 * and which have a payload stored apart.
 */
const sqlLockExpired = (t: Tables) => `
SELECT id, payload = '' AS apart
FROM ${t.deadJobs}
WHERE failed_at < NOW(3) - INTERVAL ? MICROSECOND
ORDER BY failed_at
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

/** dead_jobs retention: dead jobs older than deadRetentionMs, deleted a bounded batch at a time. */
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
