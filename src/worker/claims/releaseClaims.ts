import type { Executor } from '../../db/executor.ts';
import type { Tables } from '../../db/tables.ts';

/**
 * Params: ?1 lockId, ?2 ids (list). Gives back claims a stopping worker could not finish: free
 * and due at once, retry_times unchanged (the attempt did not fail; the token fences any late
 * write of the abandoned handler). affectedRows = rows released; fewer than ids.length means the
 * others were no longer held. Autocommit: re-run by the Executor after a transient conflict.
 */
const sqlRelease = (t: Tables) => `
UPDATE ${t.jobs}
SET lock_id = '',
    locked_at = DEFAULT
WHERE lock_id = ?
  AND id IN (?)`;

/** Returns how many of `ids` were released (the rest were no longer held by this claim). */
export async function releaseClaims(
  db: Executor,
  tables: Tables,
  lockId: string,
  ids: readonly number[],
): Promise<number> {
  const { affectedRows } = await db.write(sqlRelease(tables), [lockId, ids]);
  return affectedRows;
}
