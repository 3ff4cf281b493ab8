import type { Tables } from '../db/tables.ts';
import { SLUICE_DEFAULTS } from '../options.ts';
import type { MaintenanceTask, TaskDb } from '../task/MaintenanceTask.ts';
import { type ResolvedRetentionOptions, type RetentionOptions, RetentionTask } from '../task/pruneInBatches.ts';

/**
 * Params: ?1 retention in microseconds, ?2 batch size. Locks one bounded batch of history past its
 * retention, oldest first (ix_finished), skipping rows another transaction holds. Returns job ids,
 * and which have a payload stored apart.
 */
const sqlLockExpired = (t: Tables) => `
SELECT job_id, payload = '' AS apart
FROM ${t.jobHistory}
WHERE finished_at < NOW(3) - INTERVAL ? MICROSECOND
ORDER BY finished_at
LIMIT ?
FOR UPDATE SKIP LOCKED`;

/** Params: ?1 job ids (list, locked). affectedRows = rows deleted. */
const sqlDelete = (t: Tables) => `
DELETE FROM ${t.jobHistory}
WHERE job_id IN (?)`;

/** Params: ?1 job ids (list, locked). Deletes the payloads stored apart of the rows pruned with them. */
const sqlDeletePayloads = (t: Tables) => `
DELETE FROM ${t.jobPayloads}
WHERE job_id IN (?)`;

/** job_history retention: completed jobs older than historyRetentionMs, deleted a bounded batch at a time. */
export function pruneHistory(
  { db, tables }: TaskDb,
  options: RetentionOptions = {},
): MaintenanceTask<'pruneHistory', 'pruned', ResolvedRetentionOptions> {
  const statements = {
    lock: sqlLockExpired(tables),
    delete: sqlDelete(tables),
    keyOf: (r: Record<string, unknown>) => r.job_id,
    alsoDelete: {
      sql: sqlDeletePayloads(tables),
      keysOf: (rows: readonly Record<string, unknown>[]) =>
        rows.filter((r) => Number(r.apart) === 1).map((r) => r.job_id),
    },
  };
  return new RetentionTask('pruneHistory', db, statements, options, SLUICE_DEFAULTS.historyRetentionMs);
}
