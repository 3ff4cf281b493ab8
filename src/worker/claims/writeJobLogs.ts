import type { Executor } from '../../db/executor.ts';
import type { Tables } from '../../db/tables.ts';
import { valuesTable } from '../../db/valuesTable.ts';
import type { JobLogRow } from '../AttemptLog.ts';

const COLUMNS = ['id', 'attempt', 'line', 'age', 'message', 'fields', 'dropped'] as const;

/** Upsert of a line already written (a heartbeat's and the finish's writes may carry the same lines). */
const ON_DUPLICATE = `ON DUPLICATE KEY UPDATE logged_at = NOW(3) - INTERVAL v.age MICROSECOND, message = v.message,
  fields = v.fields, dropped = v.dropped`;

/**
 * Params: the rows' values (COLUMNS, row by row), then ?lockId, ?ids (list). Writes the log lines
 * of those jobs this claim still holds: the join with the live row is the fence (a job whose claim
 * was lost, or that was cancelled, gets nothing written). affectedRows is not a count of lines (an
 * upsert counts 1 or 2 per row). Autocommit or in the caller's transaction; re-run by the Executor
 * after a transient conflict.
 */
const sqlWriteHeld = (t: Tables, rows: number) => `
INSERT INTO ${t.jobLogs} (job_id, attempt, line, logged_at, message, fields, dropped)
SELECT j.id, v.attempt, v.line, NOW(3) - INTERVAL v.age MICROSECOND, v.message, v.fields, v.dropped
FROM (${valuesTable(COLUMNS, rows)}) v
JOIN ${t.jobs} j ON j.id = v.id
WHERE j.lock_id = ?
  AND j.id IN (?)
${ON_DUPLICATE}`;

/**
 * Params: the rows' values (COLUMNS, row by row). Writes log lines by job id alone: only for jobs
 * whose row already left the live table for good — an at-most-once job (deleted before its
 * handler ran) and a job cancelled while it ran — which no claim can write to any more.
 */
const sqlWriteFinished = (t: Tables, rows: number) => `
INSERT INTO ${t.jobLogs} (job_id, attempt, line, logged_at, message, fields, dropped)
SELECT v.id, v.attempt, v.line, NOW(3) - INTERVAL v.age MICROSECOND, v.message, v.fields, v.dropped
FROM (${valuesTable(COLUMNS, rows)}) v
${ON_DUPLICATE}`;

/** Most rows, and most bytes of text, in one statement (well under the placeholder and packet limits). */
const MAX_ROWS = 1_000;
const MAX_BYTES = 2 * 1024 * 1024;

/**
 * Writes log lines kept with ctx.log: fenced by `lockId` (the jobs this claim still holds), or,
 * with null, by job id alone (see sqlWriteFinished). One statement for all the rows — more only
 * past MAX_ROWS or MAX_BYTES — and none when there are none.
 */
export async function writeJobLogs(
  db: Executor,
  tables: Tables,
  lockId: string | null,
  rows: readonly JobLogRow[],
): Promise<void> {
  for (const chunk of chunks(rows)) {
    const values = chunk.flatMap((r) => [r.jobId, r.attempt, r.line, r.ageUs, r.message, r.fields, r.dropped]);
    if (lockId === null) await db.write(sqlWriteFinished(tables, chunk.length), values);
    else
      await db.write(sqlWriteHeld(tables, chunk.length), [...values, lockId, [...new Set(chunk.map((r) => r.jobId))]]);
  }
}

function* chunks(rows: readonly JobLogRow[]): Generator<JobLogRow[]> {
  let chunk: JobLogRow[] = [];
  let bytes = 0;
  for (const row of rows) {
    const size = Buffer.byteLength(row.message) + (row.fields === null ? 0 : Buffer.byteLength(row.fields));
    if (chunk.length > 0 && (chunk.length >= MAX_ROWS || bytes + size > MAX_BYTES)) {
      yield chunk;
      chunk = [];
      bytes = 0;
    }
    chunk.push(row);
    bytes += size;
  }
  if (chunk.length > 0) yield chunk;
}
