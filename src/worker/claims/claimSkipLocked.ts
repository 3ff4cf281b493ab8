import type { Executor } from '../../db/executor.ts';
import { idSet } from '../../db/idSet.ts';
import type { Tables } from '../../db/tables.ts';
import { withTransaction } from '../../db/transaction.ts';
import { CLAIMED_COLUMNS, type ClaimedRow, claimedFrom, waitedMsColumn } from './claimedRow.ts';
import { type ClaimRequest, queueGate } from './claimRandomHead.ts';

/**
 * Params: ?1 queue, ?2 priorities (list), ?3 want. Locks up to `want` free, due rows at the head
 * (bounded ix_head ranges, as in claimRandomHead), skipping rows other transactions hold (their
 * claims, uncommitted enqueues). Returns the full rows, each with how long it has been due
 * (waited_ms, DB clock: the claim that follows in this transaction sets locked_at to the same NOW)
 * and its payload stored apart, by primary key (claimedFrom).
 */
const sqlLockHead = (t: Tables) => `
SELECT ${CLAIMED_COLUMNS}, ${waitedMsColumn('NOW(3)')}
FROM ${claimedFrom(t)}
WHERE queue = ?
  AND lock_id = ''
  AND priority IN (?)
  AND run_at <= NOW(3)
ORDER BY priority, run_at, id
LIMIT ?
FOR UPDATE SKIP LOCKED`;

/**
 * Params: ?1 lockId, then the idSet of the locked ids (all of queue ?3, locked by this transaction), then ?3 queue.
 * Claims them unless the queue's row refuses (queueGate: paused or limited, checked once per
 * statement). affectedRows = ids.length, or 0 when refused.
 */
const sqlClaimLocked = (t: Tables, ids: string) => `
UPDATE ${t.jobs}
SET lock_id = ?,
    locked_at = NOW(3),
    claimed_at = NOW(3)
WHERE ${ids}
  AND ${queueGate(t)}`;

/** A claim request as for claimRandomHead, without the head size (the lock read takes exactly `want`). */
export type SkipLockedRequest = Omit<ClaimRequest, 'headSize'>;

/**
 * The alternative claim: SELECT … FOR UPDATE SKIP LOCKED and UPDATE in one short READ COMMITTED
 * transaction (MySQL 8.0+, MariaDB 10.6+). A transient conflict (deadlocks are seen with 50-row
 * claims on MariaDB) re-runs the whole transaction, inside withTransaction.
 */
export async function claimSkipLocked(db: Executor, tables: Tables, req: SkipLockedRequest): Promise<ClaimedRow[]> {
  if (req.priorities.length === 0) return [];
  return withTransaction(db, async (tx) => {
    const rows = await tx.select<ClaimedRow>(sqlLockHead(tables), [req.queue, req.priorities, req.want]);
    if (rows.length === 0) return [];
    const ids = idSet(
      'id',
      rows.map((r) => Number(r.id)),
    );
    const { affectedRows } = await tx.write(sqlClaimLocked(tables, ids.sql), [req.lockId, ...ids.params, req.queue]);
    if (affectedRows === 0) {
      if (req.refused) req.refused.value = true;
      return [];
    }
    for (const row of rows) row.lock_id = req.lockId;
    return rows;
  });
}
