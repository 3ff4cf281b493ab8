import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';
import { withTransaction } from '../db/transaction.ts';
import { HELD_RUN_AT } from '../model/heldRunAt.ts';
import { GROUP_FLAGS } from '../model/jobFlags.ts';
import { settleGroup } from './settleGroup.ts';

/**
 * Params: ?1 queue, ?2 group, ?3 after job id, ?4 limit. One page of the group's members (the next
 * `limit` entries of job_group_members' primary key after the cursor), each looked up in jobs by
 * primary key: how many members were read, the last one's job id (the next page's cursor), and how
 * many of them hold a slot (live, flagged, not held). A member whose job is gone counts nothing.
 * Rows read: the page and one primary-key look-up per member, whatever the size of the jobs table.
 * A plain read: no lock.
 */
const sqlSlotsPage = (t: Tables) => `
SELECT COUNT(*) AS seen,
       MAX(p.job_id) AS last_job_id,
       COALESCE(SUM(p.holds_slot), 0) AS taken
FROM (
  SELECT m.job_id,
         j.id IS NOT NULL AND (j.flags & ${GROUP_FLAGS}) <> 0 AND j.run_at <> '${HELD_RUN_AT}' AS holds_slot
  FROM ${t.jobGroupMembers} m
  LEFT JOIN ${t.jobs} j ON j.id = m.job_id AND j.queue = m.queue AND j.group_key = m.group_key
  WHERE m.queue = ?
    AND m.group_key = ?
    AND m.job_id > ?
  ORDER BY m.job_id
  LIMIT ?
) p`;

/**
 * Params: ?1 slots taken (counted), ?2 the same, ?3 queue, ?4 group, ?5 active when the count
 * began, ?6 updated_at then. Writes the count onto the group's row only if the row has not moved
 * since the count began (every change of a group's slots moves it: settleGroup), and moves
 * updated_at only if the count differs. The lock wait is bounded at 2 s, as settleGroup's (a row
 * locked by someone is one that is moving: a timeout re-runs the transaction, whose fence then
 * fails). affectedRows: 1 written, 0 the group moved.
 */
const sqlWriteCount = (t: Tables) => `
/*M!100300 SET STATEMENT innodb_lock_wait_timeout = 2 FOR */
UPDATE /*+ SET_VAR(innodb_lock_wait_timeout = 2) */ ${t.jobGroups}
SET updated_at = IF(active = ?, updated_at, NOW(3)),
    active = ?
WHERE queue = ?
  AND group_key = ?
  AND active = ?
  AND updated_at = ?`;

/** One page of a group's count: members read, where the next page starts, slots taken among them. */
export interface SlotsPage {
  readonly seen: number;
  readonly lastJobId: number;
  readonly taken: number;
}

/** Counts the slots taken among one page of the group's members (see sqlSlotsPage). */
export async function countSlotsPage(
  db: Executor,
  tables: Tables,
  group: { readonly queue: string; readonly group: string },
  afterJobId: number,
  limit: number,
): Promise<SlotsPage> {
  const [row] = await db.select<{
    seen: number | string;
    last_job_id: number | string | null;
    taken: number | string;
  }>(sqlSlotsPage(tables), [group.queue, group.group, afterJobId, limit]);
  const seen = Number(row?.seen ?? 0);
  return { seen, lastJobId: seen === 0 ? afterJobId : Number(row?.last_job_id), taken: Number(row?.taken ?? 0) };
}

/** A group's slots taken, counted from its members without its lock, and how its row read when the count began. */
export interface GroupRecount {
  readonly queue: string;
  readonly group: string;
  readonly taken: number;
  /** The row's `active` and `updated_at` when the count began: the fence of the write. */
  readonly active: number;
  readonly updatedAt: Date;
}

/**
 * Applies a count made outside the group's lock, in one short transaction: the fenced write of the
 * count (sqlWriteCount), then, if it held, settleGroup, which releases the group's held jobs while
 * it has room. The group's lock is held for those few statements only, never for the count. Returns
 * the jobs released, or null when the group moved since the count began (it settled itself
 * meanwhile: the count is stale and nothing is written).
 */
export function applyRecount(db: Executor, tables: Tables, recount: GroupRecount): Promise<number | null> {
  const { queue, group, taken } = recount;
  return withTransaction(db, async (tx) => {
    const fenced = await tx.write(sqlWriteCount(tables), [
      taken,
      taken,
      queue,
      group,
      recount.active,
      recount.updatedAt,
    ]);
    if (fenced.affectedRows !== 1) return null;
    return settleGroup(tx, tables, { queue, group, freed: 0, limit: null });
  });
}
