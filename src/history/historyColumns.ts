/**
 * The columns every copy of a finished job into job_history writes, in order: the worker's
 * completion (completeJobs) and a cancel (cancelJobs) fill them from the live row.
 */
export const HISTORY_INSERT_COLUMNS =
  'job_id, queue, name, payload, priority, retry_times, max_retries, batch_id, idempotency_key, last_error, created_at, started_at, finished_at, outcome, result';

/**
 * The live row's side of HISTORY_INSERT_COLUMNS up to finished_at, for `SELECT … FROM jobs j`:
 * started_at is when the last attempt was claimed (none for a job cancelled while free): its
 * claimed_at, not locked_at, which each heartbeat moves on — or locked_at for a claim a worker of
 * an earlier version took without writing claimed_at (rolling upgrade: 202612080100).
 */
export const HISTORY_FROM_LIVE =
  "j.id, j.queue, j.name, j.payload, j.priority, j.retry_times, j.max_retries, j.batch_id, j.idempotency_key, j.last_error, j.created_at, IF(j.lock_id = '', NULL, IF(j.claimed_at > '1970-01-01 00:00:01', j.claimed_at, j.locked_at)), NOW(3)";
