import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';
import type { JobLogLine } from '../model/jobLogLine.ts';
import { parseJson } from './parseJson.ts';

/**
 * Params: ?1 job id, ?2 limit. The job's log lines in the order they were logged (attempt, then
 * line; line 0 is an attempt's count of dropped lines): one primary-key range, bounded by what the
 * caps let a job keep and by the limit.
 */
const sqlList = (t: Tables) => `
SELECT attempt, line, logged_at, message, fields, dropped
FROM ${t.jobLogs}
WHERE job_id = ?
ORDER BY attempt, line
LIMIT ?`;

interface JobLogRow {
  attempt: number;
  line: number;
  logged_at: Date;
  message: string;
  fields: string | null;
  dropped: number;
}

/** Most rows one read returns (the defaults keep at most 10 attempts × 101 rows). */
const MAX_ROWS = 100_000;

/** A job's log lines (oldest first), and how many lines its attempts dropped past their caps. */
export async function listJobLogs(
  db: Executor,
  tables: Tables,
  jobId: number,
): Promise<{ lines: JobLogLine[]; dropped: number }> {
  const rows = await db.select<JobLogRow>(sqlList(tables), [jobId, MAX_ROWS]);
  const lines: JobLogLine[] = [];
  let dropped = 0;
  for (const r of rows) {
    if (Number(r.line) === 0) {
      dropped += Number(r.dropped);
      continue;
    }
    const line = { attempt: Number(r.attempt), at: r.logged_at, message: r.message };
    lines.push(r.fields === null ? line : { ...line, fields: parseJson(r.fields) });
  }
  return { lines, dropped };
}
