import { setTimeout as sleep } from 'node:timers/promises';
import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';
import { withTransaction } from '../db/transaction.ts';
import { type DeadJobFilter, deadJobConditions } from './deadJobFilter.ts';

/**
 * Params: filter values…, ?limit. Locks one bounded batch of matching dead jobs, except dead parents
 * whose children are not settled yet (a pending edge: job_edges' primary key prefix; reconcileHolds
 * settles them from the dead row); returns their ids.
 */
const sqlLockBatch = (t: Tables, where: string) => `
SELECT id
FROM ${t.deadJobs}
WHERE ${where}
  AND NOT EXISTS (SELECT 1 FROM ${t.jobEdges} e WHERE e.parent_id = ${t.deadJobs}.id AND e.parent_outcome IS NULL)
ORDER BY id
LIMIT ?
FOR UPDATE`;

/** Params: ?1 ids (list, locked). Deletes those dead jobs. affectedRows = rows deleted. */
const sqlDelete = (t: Tables) => `
DELETE FROM ${t.deadJobs}
WHERE id IN (?)`;

/** Params: ?1 ids (list, locked). Deletes their payloads stored apart (none: nothing matches). */
const sqlDeletePayloads = (t: Tables) => `
DELETE FROM ${t.jobPayloads}
WHERE job_id IN (?)`;

/**
 * Deletes matching dead jobs (not re-driven ones' history) and their payloads stored apart, in
 * bounded batches with a pause between: one short transaction each (lock, delete payloads, delete
 * rows; re-run whole by withTransaction after a transient conflict). A dead parent whose children
 * are not settled yet is left out (not counted in `purged`): the maintenance process's
 * reconcileHolds settles them from its row, and a later purge removes it.
 */
export async function purgeDeadJobs(
  db: Executor,
  tables: Tables,
  filter: DeadJobFilter = {},
  options: { batchSize?: number } = {},
): Promise<{ purged: number }> {
  const batchSize = options.batchSize ?? 1000;
  const { sql, params } = deadJobConditions(filter, tables);
  let purged = 0;
  for (;;) {
    const { locked, deleted } = await withTransaction(db, async (tx) => {
      const rows = await tx.select<{ id: number | string }>(sqlLockBatch(tables, sql), [...params, batchSize]);
      if (rows.length === 0) return { locked: 0, deleted: 0 };
      const ids = rows.map((r) => Number(r.id));
      await tx.write(sqlDeletePayloads(tables), [ids]);
      return { locked: rows.length, deleted: (await tx.write(sqlDelete(tables), [ids])).affectedRows };
    });
    purged += deleted;
    if (locked < batchSize) return { purged };
    await sleep(Math.random() * 20);
  }
}
