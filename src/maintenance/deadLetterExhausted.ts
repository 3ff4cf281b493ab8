import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';
import { withTransaction } from '../db/transaction.ts';
import { DEAD_JOB_INSERT_COLUMNS } from '../deadJobs/deadJobColumns.ts';
import { leaveGroups } from '../groups/leaveGroups.ts';
import { type PayloadRedactor, redactCopied } from '../redactPayload.ts';
import { leaveAsChild } from '../workflows/leaveGraph.ts';

/**
 * Params: ?1 ids (list). Locks the free jobs among those ids whose explicit max_retries is used
 * up (rows with NULL max_retries follow their definition, which only workers know: a worker
 * dead-letters those when it claims them). Returns their ids, flags and groups. Never waits on a row another
 * transaction holds (SKIP LOCKED): such a job is dead-lettered by the worker that next claims it.
 */
const sqlLockExhausted = (t: Tables) => `
SELECT id, flags, queue, group_key
FROM ${t.jobs}
WHERE id IN (?)
  AND lock_id = ''
  AND max_retries IS NOT NULL
  AND retry_times > max_retries
FOR UPDATE SKIP LOCKED`;

/** Params: ?1 ids (list, locked). Copies them to dead_jobs with their own counts and last error. */
const sqlCopyToDead = (t: Tables) => `
INSERT INTO ${t.deadJobs} (${DEAD_JOB_INSERT_COLUMNS})
SELECT id, queue, name, payload, priority, retry_times, max_retries, batch_id, idempotency_key, last_error, created_at, NOW(3)
FROM ${t.jobs}
WHERE id IN (?)`;

/** Params: ?1 ids (list, locked). affectedRows = jobs moved. */
const sqlDelete = (t: Tables) => `
DELETE FROM ${t.jobs}
WHERE id IN (?)`;

/**
 * Moves the exhausted jobs among `ids` (just released by the maintenance process) to dead_jobs, in slices of
 * `batchSize`, one short transaction each (re-run whole by withTransaction after a transient
 * conflict). Returns how many moved. A workflow's job drops its own edges as it goes; the
 * children it leaves behind as a parent are settled by reconcileHolds.
 */
export async function deadLetterExhausted(
  db: Executor,
  tables: Tables,
  ids: readonly number[],
  batchSize: number,
  redact: PayloadRedactor | null = null,
): Promise<number> {
  let moved = 0;
  for (let i = 0; i < ids.length; i += batchSize) {
    const slice = ids.slice(i, i + batchSize);
    moved += await withTransaction(db, async (tx) => {
      const rows = await tx.select<{ id: number; flags: number; queue: string; group_key: string | null }>(
        sqlLockExhausted(tables),
        [slice],
      );
      const locked = rows.map((r) => Number(r.id));
      if (locked.length === 0) return 0;
      await tx.write(sqlCopyToDead(tables), [locked]);
      await redactCopied(tx, tables, 'dead', locked, redact);
      const { affectedRows } = await tx.write(sqlDelete(tables), [locked]);
      const leaving = rows.map((r) => ({
        id: Number(r.id),
        flags: Number(r.flags),
        queue: r.queue,
        group_key: r.group_key,
      }));
      await leaveAsChild(tx, tables, leaving, true);
      // Its group's next held job takes the slot; it waits for a worker's poll (no doorbell from here).
      await leaveGroups(tx, tables, leaving);
      return affectedRows;
    });
  }
  return moved;
}
