/**
 * The enqueue ceiling: the rows sluice writes (queue, name, payload, priority, run_at and
 * created_at from NOW(3)), each payload as its JSON, inserted with plain mysql2 multi-row INSERTs
 * (`VALUES ?`) in one transaction, `rowsPerStatement` rows per statement (fewer where 4 MiB is
 * reached). No validation, no batch row.
 */
import type { Connection, ResultSetHeader } from 'mysql2/promise';
import type { BenchJob } from './workload.ts';

/** The largest statement written: sluice's own cap (src/db/planChunks.ts, 4 MiB). */
const MAX_STATEMENT_BYTES = 4 * 1024 * 1024;

/** Rendered verbatim by mysql2's escaping, so the server's clock stamps the rows. */
const NOW3 = { toSqlString: () => 'NOW(3)' };

const sqlInsert = (table: string) => `
INSERT INTO \`${table}\` (queue, name, payload, priority, run_at, created_at)
VALUES ?`;

/** Returns the rows inserted. Rolls back and re-throws on any failure. */
export async function rawInsertJobs(
  conn: Connection,
  table: string,
  jobs: readonly BenchJob[],
  rowsPerStatement: number,
): Promise<number> {
  let inserted = 0;
  await conn.beginTransaction();
  try {
    for (const rows of statementRows(jobs, rowsPerStatement)) {
      const [header] = await conn.query<ResultSetHeader>(sqlInsert(table), [rows]);
      inserted += header.affectedRows;
    }
    await conn.commit();
    return inserted;
  } catch (error) {
    await conn.rollback();
    throw error;
  }
}

/**
 * The rows of each statement: `rowsPerStatement`, or fewer where their payloads pass MAX_STATEMENT_BYTES
 * (sluice's own cap on a statement: its stored payloads may be packed, and so more of them fit one
 * statement than of the JSON written here).
 */
function* statementRows(jobs: readonly BenchJob[], rowsPerStatement: number): Generator<unknown[][]> {
  let rows: unknown[][] = [];
  let bytes = 0;
  for (const job of jobs) {
    const row = toRow(job);
    const size = (row[2] as string).length + 64;
    if (rows.length > 0 && (rows.length >= rowsPerStatement || bytes + size > MAX_STATEMENT_BYTES)) {
      yield rows;
      rows = [];
      bytes = 0;
    }
    rows.push(row);
    bytes += size;
  }
  if (rows.length > 0) yield rows;
}

function toRow(job: BenchJob): unknown[] {
  return [job.queue, job.name, JSON.stringify(job.payload), job.priority, NOW3, NOW3];
}
