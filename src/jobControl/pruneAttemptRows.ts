import type { Tables } from '../db/tables.ts';
import { SLUICE_DEFAULTS } from '../options.ts';
import type { MaintenanceTask, TaskDb } from '../task/MaintenanceTask.ts';
import {
  type ResolvedRetentionOptions,
  type RetentionOptions,
  RetentionTask,
  retentionAtLeast,
} from '../task/pruneInBatches.ts';

/** A table of rows kept per attempt of a job (job_errors, job_logs): its key, and the time index the prune walks. */
export interface AttemptRows {
  readonly table: keyof Pick<Tables, 'jobErrors' | 'jobLogs'>;
  /** The row's time column, first in the index the prune reads oldest first (ix_failed, ix_logged). */
  readonly timeColumn: string;
}

/**
 * Params: ?1 retention in microseconds, ?2 batch size. Locks one bounded batch of the rows written
 * before the retention, oldest first by their time index, of jobs that are in none of jobs,
 * job_history and dead_jobs (a primary-key probe each; the probes are plain reads), skipping rows
 * another transaction holds. Returns job ids (repeated for a job with several rows).
 */
const sqlLockExpired = (t: Tables, rows: AttemptRows) => `
SELECT a.job_id
FROM ${t[rows.table]} a
WHERE a.${rows.timeColumn} < NOW(3) - INTERVAL ? MICROSECOND
  AND NOT EXISTS (SELECT 1 FROM ${t.jobs} j WHERE j.id = a.job_id)
  AND NOT EXISTS (SELECT 1 FROM ${t.jobHistory} h WHERE h.job_id = a.job_id)
  AND NOT EXISTS (SELECT 1 FROM ${t.deadJobs} d WHERE d.id = a.job_id)
ORDER BY a.${rows.timeColumn}
LIMIT ?
FOR UPDATE SKIP LOCKED`;

/** Params: ?1 job ids (list; their jobs are gone). affectedRows = rows deleted. */
const sqlDelete = (t: Tables, rows: AttemptRows) => `
DELETE FROM ${t[rows.table]}
WHERE job_id IN (?)`;

/**
 * The retention of a table of per-attempt rows: a job's rows stay while it is live and as long as
 * its history or dead row, and go a bounded batch at a time once it is in none of them. Pass the
 * longer of the history and dead-job retentions (see attemptRetentionMs).
 */
export function pruneAttemptRows<N extends string>(
  name: N,
  rows: AttemptRows,
  { db, tables }: TaskDb,
  options: RetentionOptions = {},
): MaintenanceTask<N, 'pruned', ResolvedRetentionOptions> {
  const statements = {
    lock: sqlLockExpired(tables, rows),
    delete: sqlDelete(tables, rows),
    keyOf: (r: Record<string, unknown>) => r.job_id,
  };
  const retentionMs = retentionAtLeast(options.retentionMs ?? attemptRetentionMs(SLUICE_DEFAULTS), 1);
  return new RetentionTask(name, db, statements, { ...options, retentionMs }, retentionMs());
}

/**
 * How old an attempt's error or log line must be before the prune looks at it: the longer of the
 * history and dead-job retentions. A row is never older than its job's end, so once the job's
 * history or dead row is pruned the row is past this too, and the rows the prune reads past —
 * old rows whose job is still kept — are only those of jobs kept longer after a failure than that
 * (Infinity: never pruned, as with either retention kept until purged).
 */
export function attemptRetentionMs(options: { historyRetentionMs: number; deadRetentionMs: number }): number {
  return Math.max(options.historyRetentionMs, options.deadRetentionMs);
}
