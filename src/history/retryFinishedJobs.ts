import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';
import { withTransaction } from '../db/transaction.ts';

/** Params: ?1 job ids (list, at most a chunk). Locks the finished jobs among them not yet retried. */
const sqlLock = (t: Tables) => `
SELECT job_id, queue
FROM ${t.jobHistory}
WHERE job_id IN (?)
  AND retried_as IS NULL
ORDER BY job_id
FOR UPDATE`;

/**
 * Params: ?1 job id (locked). Inserts a new live job that re-runs a finished one: same queue,
 * name, payload, priority and retry limit, due now, no attempts yet. A retry is a deliberate
 * re-run, so it carries no idempotency key (the old key runs out its retention) and joins no batch
 * (the old one may have finished and run its onComplete). A payload stored apart is copied into
 * the new row, as a re-drive does. Returns insertId = the new job's id.
 */
const sqlInsert = (t: Tables) => `
INSERT INTO ${t.jobs} (queue, name, payload, priority, run_at, max_retries, batch_id, idempotency_key, last_error, created_at)
SELECT h.queue, h.name, COALESCE(p.payload, h.payload), h.priority, NOW(3), h.max_retries, NULL, NULL, NULL, NOW(3)
FROM ${t.jobHistory} h
LEFT JOIN ${t.jobPayloads} p ON p.job_id = h.job_id AND h.payload = ''
WHERE h.job_id = ?`;

/** Params: ?1 new job id, ?2 old job id (locked). The finished row points at the job that re-runs it. */
const sqlMark = (t: Tables) => `
UPDATE ${t.jobHistory}
SET retried_as = ?
WHERE job_id = ?
  AND retried_as IS NULL`;

/** Ids one transaction retries: a short transaction whatever the list's length. */
const CHUNK = 200;

/**
 * Re-runs finished (completed or cancelled) jobs as new live jobs, each linked from its history
 * row (`retried_as`): one short transaction per 200 ids. A job already retried, or not in the
 * history (live, dead, pruned), is left alone and not counted. Returns the old → new ids and the
 * queues written to (with how many jobs each: the workers to ring).
 */
export async function retryFinishedJobs(
  db: Executor,
  tables: Tables,
  ids: readonly number[],
): Promise<{ retried: Map<number, number>; queues: Map<string, number> }> {
  const retried = new Map<number, number>();
  const queues = new Map<string, number>();
  for (let i = 0; i < ids.length; i += CHUNK) {
    const chunk = ids.slice(i, i + CHUNK);
    const done = await withTransaction(db, async (tx) => {
      const rows = await tx.select<{ job_id: number | string; queue: string }>(sqlLock(tables), [chunk]);
      const pairs: [number, number, string][] = [];
      for (const row of rows) {
        const id = Number(row.job_id);
        const { insertId } = await tx.write(sqlInsert(tables), [id]);
        await tx.write(sqlMark(tables), [insertId, id]);
        pairs.push([id, Number(insertId), row.queue]);
      }
      return pairs;
    });
    for (const [old, created, queue] of done) {
      retried.set(old, created);
      queues.set(queue, (queues.get(queue) ?? 0) + 1);
    }
  }
  return { retried, queues };
}
