import type { Executor } from '../../db/executor.ts';
import type { Tables } from '../../db/tables.ts';

/**
 * Params: ?1 delay in microseconds, ?2 lockId, ?3 ids (list). Gives back jobs this worker has no
 * handler for: free again, not before NOW(3) + delay (so that the worker does not claim them again
 * at once), retry_times and last_error unchanged — no attempt ran. affectedRows = rows given back;
 * fewer than ids.length means the others were no longer held. Autocommit: re-run by the Executor
 * after a transient conflict.
 */
const sqlGiveBack = (t: Tables) => `
UPDATE ${t.jobs}
SET lock_id = '',
    locked_at = DEFAULT,
    run_at = NOW(3) + INTERVAL ? MICROSECOND
WHERE lock_id = ?
  AND id IN (?)`;

/** Returns how many of `ids` were given back (the rest were no longer held by this claim). */
export async function giveBackUnknown(
  db: Executor,
  tables: Tables,
  lockId: string,
  ids: readonly number[],
  delayMs: number,
): Promise<number> {
  const { affectedRows } = await db.write(sqlGiveBack(tables), [Math.round(delayMs * 1000), lockId, ids]);
  return affectedRows;
}
