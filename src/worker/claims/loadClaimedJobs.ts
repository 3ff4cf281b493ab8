import type { Executor } from '../../db/executor.ts';
import type { Tables } from '../../db/tables.ts';
import { CLAIMED_COLUMNS, type ClaimedRow, claimedFrom, waitedMsColumn } from './claimedRow.ts';

/**
 * Params: ?1 queue, ?2 lockId. Returns the rows this claim holds, each with how long it had been
 * due when claimed (waited_ms, DB clock) — exactly the rows its claim
 * statement changed, since the lockId is unique to that statement — by one ix_head range, in the
 * claim's order, without filesort (by the list of ids the server spent about twice as long: it
 * parses and range-builds every id), with each payload stored apart by its primary key (claimedFrom).
 * A plain read (re-run by the Executor after a transient conflict).
 */
const sqlLoadClaimed = (t: Tables) => `
SELECT ${CLAIMED_COLUMNS}, ${waitedMsColumn('locked_at')}
FROM ${claimedFrom(t)}
WHERE queue = ?
  AND lock_id = ?
ORDER BY priority, run_at, id`;

export function loadClaimedJobs(db: Executor, tables: Tables, queue: string, lockId: string): Promise<ClaimedRow[]> {
  return db.select<ClaimedRow>(sqlLoadClaimed(tables), [queue, lockId]);
}
