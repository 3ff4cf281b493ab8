/**
 * The raw ceiling's claim-and-delete step (no sluice code): one short SKIP LOCKED transaction per
 * batch — BEGIN; lock the head with SELECT … FOR UPDATE SKIP LOCKED; DELETE those ids; COMMIT —
 * four round trips and one durable commit. In a trial on MariaDB 10.11 (2 cores) it beat the
 * autocommit alternative (UPDATE … SET lock_id … ORDER BY … LIMIT 50; SELECT the claimed rows;
 * DELETE them: three round trips, two commits) at 1, 2 and 4 processes (4,160 / 6,469 / 5,643
 * vs 2,100 / 5,463 / 5,150 jobs/s), so it is the ceiling. Run by rawWorker.ts (the drains) and
 * drainPath.ts (its server cost per job).
 */
import type { Connection, ResultSetHeader, RowDataPacket } from 'mysql2/promise';

/** Params: ?1 queue, ?2 batch. Locks the head (ix_head, in order), skipping rows other transactions hold. */
const sqlLockHead = (table: string) => `
SELECT id, payload
FROM \`${table}\`
WHERE queue = ?
  AND lock_id = ''
  AND run_at <= NOW(3)
ORDER BY priority, run_at, id
LIMIT ?
FOR UPDATE SKIP LOCKED`;

/** Params: ?1 ids (all locked by this transaction). affectedRows = ids.length. */
const sqlDelete = (table: string) => `
DELETE FROM \`${table}\`
WHERE id IN (?)`;

/** One batch: returns how many jobs it took and finished (0: the queue had none free). */
export async function claimAndDelete(conn: Connection, table: string, queue: string, batch: number): Promise<number> {
  await conn.query('BEGIN');
  try {
    const [rows] = await conn.query<RowDataPacket[]>(sqlLockHead(table), [queue, batch]);
    const done =
      rows.length === 0
        ? 0
        : (await conn.query<ResultSetHeader>(sqlDelete(table), [rows.map((r) => r.id)]))[0].affectedRows;
    await conn.query('COMMIT');
    return done;
  } catch (error) {
    await conn.query('ROLLBACK');
    throw error;
  }
}

/** A deadlock (1213) or lock wait timeout (1205) rolled the batch back: it is simply taken again. */
export async function retryingConflicts(fn: () => Promise<number>): Promise<number> {
  try {
    return await fn();
  } catch (error) {
    const errno = (error as { errno?: number }).errno;
    if (errno === 1213 || errno === 1205) return 0;
    throw error;
  }
}
