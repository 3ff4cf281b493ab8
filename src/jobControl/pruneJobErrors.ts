import type { MaintenanceTask, TaskDb } from '../task/MaintenanceTask.ts';
import type { ResolvedRetentionOptions, RetentionOptions } from '../task/pruneInBatches.ts';
import { pruneAttemptRows } from './pruneAttemptRows.ts';

/** job_errors retention (pruneAttemptRows), oldest first by ix_failed. */
export function pruneJobErrors(
  taskDb: TaskDb,
  options: RetentionOptions = {},
): MaintenanceTask<'pruneJobErrors', 'pruned', ResolvedRetentionOptions> {
  return pruneAttemptRows('pruneJobErrors', { table: 'jobErrors', timeColumn: 'failed_at' }, taskDb, options);
}
