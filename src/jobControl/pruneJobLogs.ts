import type { Tables } from '../db/tables.ts';
import { SLUICE_DEFAULTS } from '../options.ts';
import type { MaintenanceTask, TaskDb } from '../task/MaintenanceTask.ts';
import {
  type ResolvedRetentionOptions,
  type RetentionOptions,
  RetentionTask,
  retentionAtLeast,
} from '../task/pruneInBatches.ts';
import { attemptRetentionMs } from './pruneJobErrors.ts';

/**
 * Params: ?1 retention in microseconds, ?2 batch size. Locks one bounded batch of log lines
 * logged before the retention, oldest first (ix_logged), of jobs that are in none of jobs,
 * job_history and dead_jobs (a primary-key probe each; the probes are plain reads), skipping rows
 * another transaction holds. Returns job ids (repeated for a job with several rows).
 */
const sqlLockExpired = (t: Tables) => `
SELECT l.job_id
FROM ${t.jobLogs} l
WHERE l.logged_at < NOW(3) - INTERVAL ? MICROSECOND
  AND NOT EXISTS (SELECT 1 FROM ${t.jobs} j WHERE j.id = l.job_id)
  AND NOT EXISTS (SELECT 1 FROM ${t.jobHistory} h WHERE h.job_id = l.job_id)
  AND NOT EXISTS (SELECT 1 FROM ${t.deadJobs} d WHERE d.id = l.job_id)
ORDER BY l.logged_at
LIMIT ?
FOR UPDATE SKIP LOCKED`;

/** Params: ?1 job ids (list; their jobs are gone). affectedRows = rows deleted. */
const sqlDelete = (t: Tables) => `
DELETE FROM ${t.jobLogs}
WHERE job_id IN (?)`;

/**
 * job_logs retention, as pruneJobErrors: a job's lines stay while it is live and as long as its
 * history or dead row, and go a bounded batch at a time once it is in none of them.
 */
export function pruneJobLogs(
  { db, tables }: TaskDb,
  options: RetentionOptions = {},
): MaintenanceTask<'pruneJobLogs', 'pruned', ResolvedRetentionOptions> {
  const statements = {
    lock: sqlLockExpired(tables),
    delete: sqlDelete(tables),
    keyOf: (r: Record<string, unknown>) => r.job_id,
  };
  const retentionMs = retentionAtLeast(options.retentionMs ?? attemptRetentionMs(SLUICE_DEFAULTS), 1);
  return new RetentionTask('pruneJobLogs', db, statements, { ...options, retentionMs }, retentionMs());
}
