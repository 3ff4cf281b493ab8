import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';
import type { AttemptError } from '../model/attemptError.ts';

/** Params: ?1 job id. The job's kept attempt errors, newest first: one primary-key range. */
const sqlList = (t: Tables) => `
SELECT attempt, failed_at, worker_id, code, message, stack
FROM ${t.jobErrors}
WHERE job_id = ?
ORDER BY attempt DESC`;

interface AttemptErrorRow {
  attempt: number;
  failed_at: Date;
  worker_id: string | null;
  code: string | null;
  message: string;
  stack: string | null;
}

/** The errors of a job's latest failed attempts (keptAttempts of them at most), newest first. */
export async function listAttemptErrors(db: Executor, tables: Tables, jobId: number): Promise<AttemptError[]> {
  const rows = await db.select<AttemptErrorRow>(sqlList(tables), [jobId]);
  return rows.map((r) => ({
    attempt: Number(r.attempt),
    failedAt: r.failed_at,
    workerId: r.worker_id,
    message: r.message,
    code: r.code,
    stack: r.stack,
  }));
}
