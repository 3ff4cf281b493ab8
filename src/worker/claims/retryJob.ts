import type { Executor } from '../../db/executor.ts';
import type { Tables } from '../../db/tables.ts';
import { withTransaction } from '../../db/transaction.ts';
import { ClaimLostError } from '../../errors.ts';
import type { JobLogRow } from '../AttemptLog.ts';
import { type FailedAttempt, recordFailedAttempt } from './recordFailedAttempt.ts';
import { writeJobLogs } from './writeJobLogs.ts';

/**
 * Params: ?1 delay in microseconds, ?2 last error, ?3 id, ?4 lockId. Releases a failed job for a
 * later attempt: free again, retry_times + 1, not before NOW(3) + delay. Returns affectedRows 1,
 * or 0 if the claim was lost. Autocommit: re-run by the Executor after a transient conflict.
 */
const sqlRetry = (t: Tables) => `
UPDATE ${t.jobs}
SET lock_id = '',
    locked_at = DEFAULT,
    retry_times = retry_times + 1,
    run_at = NOW(3) + INTERVAL ? MICROSECOND,
    last_error = ?
WHERE id = ?
  AND lock_id = ?`;

/** What a failed attempt leaves behind besides last_error: its error row and its unwritten log lines. */
export interface AttemptTrace {
  /** Null when no attempt errors are kept (keptAttempts 0). */
  readonly failed: FailedAttempt | null;
  readonly logs: readonly JobLogRow[];
  /** keptAttempts: the job's errors and log lines are trimmed to its latest this many attempts. */
  readonly keep: number;
}

/**
 * Fenced release with backoff after a failed attempt; throws ClaimLostError if the claim was lost.
 * With a trace, the release, the attempt's error and its last log lines commit in one short
 * transaction (re-run whole by withTransaction after a transient conflict): the lines first,
 * fenced by their join with the still-claimed row, then the release, whose affected rows decide —
 * a lost claim rolls all of it back. Without one, the single autocommit UPDATE.
 */
export async function retryJob(
  db: Executor,
  tables: Tables,
  job: { id: number; lockId: string },
  delayMs: number,
  lastError: string,
  trace: AttemptTrace | null = null,
): Promise<void> {
  if (trace === null || (trace.failed === null && trace.logs.length === 0)) {
    return release(db, tables, job, delayMs, lastError);
  }
  await withTransaction(db, async (tx) => {
    await writeJobLogs(tx, tables, job.lockId, trace.logs);
    await release(tx, tables, job, delayMs, lastError);
    if (trace.failed) await recordFailedAttempt(tx, tables, trace.failed, trace.keep);
  });
}

async function release(
  db: Executor,
  tables: Tables,
  job: { id: number; lockId: string },
  delayMs: number,
  lastError: string,
): Promise<void> {
  const { affectedRows } = await db.write(sqlRetry(tables), [
    Math.round(delayMs * 1000),
    lastError,
    job.id,
    job.lockId,
  ]);
  if (affectedRows !== 1) throw new ClaimLostError('retry', job.lockId, [job.id], 1);
}
