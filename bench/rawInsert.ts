/**
 * The enqueue ceiling: the same rows sluice writes (queue, name, payload, priority, run_at and
 * created_at from NOW(3)), inserted with plain mysql2 multi-row INSERTs (`VALUES ?`) in one
 * transaction, `rowsPerStatement` rows per statement. No validation, no batch row.
 */
import type { Connection, ResultSetHeader } from 'mysql2/promise';
import type { BenchJob } from './workload.ts';

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
    for (let start = 0; start < jobs.length; start += rowsPerStatement) {
      const rows = jobs.slice(start, start + rowsPerStatement).map(toRow);
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

function toRow(job: BenchJob): unknown[] {
  return [job.queue, job.name, JSON.stringify(job.payload), job.priority, NOW3, NOW3];
}
