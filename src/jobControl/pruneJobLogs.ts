import type { MaintenanceTask, TaskDb } from '../task/MaintenanceTask.ts';
import type { ResolvedRetentionOptions, RetentionOptions } from '../task/pruneInBatches.ts';
import { pruneAttemptRows } from './pruneAttemptRows.ts';

/** job_logs retention (pruneAttemptRows), oldest first by ix_logged. */
export function pruneJobLogs(
  taskDb: TaskDb,
  options: RetentionOptions = {},
): MaintenanceTask<'pruneJobLogs', 'pruned', ResolvedRetentionOptions> {
  return pruneAttemptRows('pruneJobLogs', { table: 'jobLogs', timeColumn: 'logged_at' }, taskDb, options);
}
