import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';

/**
 * Params: ?1 ids (list). The ids among them that job_history holds as cancelled: one primary-key
 * probe each. A plain read: on the pool it is re-run after a transient conflict by the Executor.
 */
const sqlCancelled = (t: Tables) => `
SELECT job_id
FROM ${t.jobHistory}
WHERE job_id IN (?)
  AND outcome = 'cancelled'`;

/**
 * Which of the jobs whose claim a worker found gone were cancelled (cancelJobs moved them to the
 * history as cancelled) rather than taken back by the sweeper: the heartbeat asks only when an
 * extend matched fewer jobs than it held, so a normal beat costs nothing more.
 */
export async function cancelledAmong(db: Executor, tables: Tables, ids: readonly number[]): Promise<Set<number>> {
  if (ids.length === 0) return new Set();
  const rows = await db.select<{ job_id: number | string }>(sqlCancelled(tables), [ids]);
  return new Set(rows.map((r) => Number(r.job_id)));
}
