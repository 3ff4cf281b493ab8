import type { Executor } from '../../db/executor.ts';
import type { Tables } from '../../db/tables.ts';
import type { AttemptErrorFields } from '../../model/attemptError.ts';

/**
 * Params: ?1 job id, ?2 attempt, ?3 worker id, ?4 code, ?5 message, ?6 stack, then ?3–?6 again.
 * Keeps one failed attempt's error, on the DB clock. An attempt number seen again (a job whose
 * retry_times was set back) overwrites its row. affectedRows 1 (new) or 2 (overwritten).
 */
const sqlInsertError = (t: Tables) => `
INSERT INTO ${t.jobErrors} (job_id, attempt, failed_at, worker_id, code, message, stack)
VALUES (?, ?, NOW(3), ?, ?, ?, ?)
ON DUPLICATE KEY UPDATE failed_at = NOW(3), worker_id = ?, code = ?, message = ?, stack = ?`;

/** Params: ?1 job id, ?2 the newest attempt to drop. Drops the errors of attempts older than the kept ones. */
const sqlTrimErrors = (t: Tables) => `
DELETE FROM ${t.jobErrors}
WHERE job_id = ?
  AND attempt <= ?`;

/** Params: ?1 job id, ?2 the newest attempt to drop. Drops the log lines of attempts older than the kept ones. */
const sqlTrimLogs = (t: Tables) => `
DELETE FROM ${t.jobLogs}
WHERE job_id = ?
  AND attempt <= ?`;

/** One failed attempt, as the worker that ran it records it. */
export interface FailedAttempt {
  readonly jobId: number;
  /** retry_times + 1 of the claim that ran it. */
  readonly attempt: number;
  readonly workerId: string;
  readonly error: AttemptErrorFields;
}

/**
 * Keeps a failed attempt's error and trims the job's errors and log lines to its latest `keep`
 * attempts (a trim only from attempt keep + 1 on: until then, one statement). Not fenced itself:
 * call it in the transaction of the fenced write that records the failure (retryJob,
 * deadLetterJob), after that write matched, so a lost claim rolls it back with the rest. Nothing
 * at all when `keep` is 0.
 */
export async function recordFailedAttempt(
  tx: Executor,
  tables: Tables,
  failed: FailedAttempt,
  keep: number,
): Promise<void> {
  if (keep === 0) return;
  const { message, code, stack } = failed.error;
  const columns = [failed.workerId, code, message, stack];
  await tx.write(sqlInsertError(tables), [failed.jobId, failed.attempt, ...columns, ...columns]);
  if (failed.attempt <= keep) return;
  await tx.write(sqlTrimErrors(tables), [failed.jobId, failed.attempt - keep]);
  await tx.write(sqlTrimLogs(tables), [failed.jobId, failed.attempt - keep]);
}
