/**
 * The columns every copy of a job into dead_jobs writes, in order: the worker's fenced
 * dead-lettering and the maintenance process's move of exhausted jobs fill them from different sources.
 */
export const DEAD_JOB_INSERT_COLUMNS =
  'id, queue, name, payload, priority, retry_times, max_retries, batch_id, idempotency_key, last_error, created_at, failed_at';
