import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';
import { withTransaction } from '../db/transaction.ts';

/**
 * Params: ?1 job ids (list, at most a chunk). Locks the finished jobs among them, except workflow
 * parents whose children are not settled yet (a pending edge: job_edges' primary key prefix),
 * which reconcileHolds settles from the row; returns which have a payload stored apart.
 */
const sqlLock = (t: Tables) => `
SELECT job_id, payload = '' AS apart
FROM ${t.jobHistory} h
WHERE job_id IN (?)
  AND NOT EXISTS (SELECT 1 FROM ${t.jobEdges} e WHERE e.parent_id = h.job_id AND e.parent_outcome IS NULL)
ORDER BY job_id
FOR UPDATE`;

/** Params: ?1 job ids (list, locked). affectedRows = rows deleted. */
const sqlDelete = (t: Tables) => `
DELETE FROM ${t.jobHistory}
WHERE job_id IN (?)`;

/** Params: ?1 job ids (list, locked). Their payloads stored apart. */
const sqlDeletePayloads = (t: Tables) => `
DELETE FROM ${t.jobPayloads}
WHERE job_id IN (?)`;

/** Ids one transaction deletes. */
const CHUNK = 500;

/**
 * Deletes finished (completed or cancelled) jobs from the history by id, with their payloads
 * stored apart, one short transaction per 500 ids; their error and log rows go with the next
 * pruning pass (they are kept only while the job is somewhere). Ids not in the history are left
 * alone and not counted.
 */
export async function purgeFinishedJobs(db: Executor, tables: Tables, ids: readonly number[]): Promise<number> {
  let purged = 0;
  for (let i = 0; i < ids.length; i += CHUNK) {
    const chunk = ids.slice(i, i + CHUNK);
    purged += await withTransaction(db, async (tx) => {
      const rows = await tx.select<{ job_id: number | string; apart: number }>(sqlLock(tables), [chunk]);
      if (rows.length === 0) return 0;
      const apart = rows.filter((r) => Number(r.apart) === 1).map((r) => Number(r.job_id));
      if (apart.length > 0) await tx.write(sqlDeletePayloads(tables), [apart]);
      return (await tx.write(sqlDelete(tables), [rows.map((r) => Number(r.job_id))])).affectedRows;
    });
  }
  return purged;
}
