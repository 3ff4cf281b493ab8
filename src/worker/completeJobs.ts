import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';
import { ClaimLostError } from '../errors.ts';
import { withTransaction } from '../db/transaction.ts';
import { heldClaims } from './heldClaims.ts';

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
 * Fenced, batched completion: one statement for every finished job of one claim. With history,
 * the copy and the delete share one short transaction — one commit, and a history row exists
 * exactly when its job was removed. Throws ClaimLostError when some jobs were no longer ours:
 * without history the rest are deleted; with history the transaction rolls back, nothing changes,
 * and the claims still held expire and run again (at-least-once).
 */
export async function completeJobs(
  db: Executor,
  tables: Tables,
  lockId: string,
  ids: readonly number[],
  options: { history: boolean } = { history: false },
): Promise<void> {
  if (!options.history) return deleteFenced(db, tables, lockId, ids);
  await withTransaction(db, async (tx) => {
    await tx.write(sqlCopyToHistory(tables), [lockId, ids]);
    await deleteFenced(tx, tables, lockId, ids);
  });
}

/**
 * After completeJobs with history threw ClaimLostError (its transaction rolled back, so nothing
 * was completed): completes the jobs this claim still holds, so one lost job does not send its
 * finished siblings back to the sweeper. Returns the ids it no longer held. A claim lost again
 * meanwhile is looked up anew, at most three times; jobs still held after that stay claimed and
 * expire (at-least-once).
 */
export async function completeStillHeld(db: Executor, tables: Tables, lockId: string, ids: readonly number[]): Promise<number[]> {
  for (let attempt = 1; attempt <= 3; attempt++) {
    const held = await heldClaims(db, tables, lockId, ids);
    if (held.size === 0) break;
    try {
      await completeJobs(db, tables, lockId, [...held], { history: true });
      return ids.filter((id) => !held.has(id));
    } catch (error) {
      if (!(error instanceof ClaimLostError)) throw error;
    }
  }
  return [...ids];
}

async function deleteFenced(db: Executor, tables: Tables, lockId: string, ids: readonly number[]): Promise<void> {
  const { affectedRows } = await db.write(sqlComplete(tables), [lockId, ids]);
  if (affectedRows !== ids.length) throw new ClaimLostError('complete', lockId, ids, ids.length - affectedRows);
}
