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
 * Fenced, batched completion: one statement for every finished job of one claim. Throws
 * ClaimLostError (after deleting the rest) when some of them were no longer ours.
 */
export async function completeJobs(db: Executor, tables: Tables, lockId: string, ids: readonly number[]): Promise<void> {
  const { affectedRows } = await db.write(sqlComplete(tables), [lockId, ids]);
  if (affectedRows !== ids.length) throw new ClaimLostError('complete', lockId, ids, ids.length - affectedRows);
}
