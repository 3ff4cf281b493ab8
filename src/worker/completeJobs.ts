import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';
import { ClaimLostError } from '../errors.ts';

/**
 * Params: ?1 lockId, ?2 ids (list). Deletes the finished jobs this claim still holds.
 * Returns affectedRows = ids.length, or fewer if some claims were lost (those rows are untouched).
 */
const sqlComplete = (t: Tables) => `
DELETE FROM ${t.jobs}
WHERE lock_id = ?
  AND id IN (?)`;

/**
 * Params: ?1 lockId, ?2 ids (list). Copies the finished jobs this claim still holds into
 * job_history (a job that completes again — after its earlier completion's claim was lost —
 * overwrites its row).
 */
const sqlCopyToHistory = (t: Tables) => `
INSERT INTO ${t.jobHistory} (job_id, queue, name, payload, retry_times, batch_id, created_at, finished_at)
SELECT id, queue, name, payload, retry_times, batch_id, created_at, NOW(3)
FROM ${t.jobs}
WHERE lock_id = ?
  AND id IN (?)
ON DUPLICATE KEY UPDATE retry_times = VALUES(retry_times), finished_at = VALUES(finished_at)`;

/**
 * Fenced, batched completion: one statement for every finished job of one claim (two with
 * history: copy, then delete — not one transaction, to keep the hot path at two round trips; if
 * the claim is lost between them, history holds an attempt that will run again). Throws
 * ClaimLostError (after deleting the rest) when some of them were no longer ours.
 */
export async function completeJobs(
  db: Executor,
  tables: Tables,
  lockId: string,
  ids: readonly number[],
  options: { history: boolean } = { history: false },
): Promise<void> {
  if (options.history) await db.write(sqlCopyToHistory(tables), [lockId, ids]);
  const { affectedRows } = await db.write(sqlComplete(tables), [lockId, ids]);
  if (affectedRows !== ids.length) throw new ClaimLostError('complete', lockId, ids, ids.length - affectedRows);
}
