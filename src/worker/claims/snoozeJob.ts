import type { Executor } from '../../db/executor.ts';
import type { Tables } from '../../db/tables.ts';
import { withTransaction } from '../../db/transaction.ts';
import { ClaimLostError } from '../../errors.ts';
import { moveGroupJobs, pauseGroupFor } from '../../queues/pauseGroupFor.ts';
import { pauseQueueFor } from '../../queues/pauseQueueFor.ts';

/**
 * Params: ?1 delay in microseconds, ?2 id, ?3 lockId. Releases a snoozed job for later: free again,
 * not before NOW(3) + delay, retry_times and last_error unchanged (no attempt is counted). Returns
 * affectedRows 1, or 0 if the claim was lost. Autocommit: re-run by the Executor after a transient
 * conflict.
 */
const sqlSnooze = (t: Tables) => `
UPDATE ${t.jobs}
SET lock_id = '',
    locked_at = DEFAULT,
    run_at = NOW(3) + INTERVAL ? MICROSECOND
WHERE id = ?
  AND lock_id = ?`;

/**
 * Fenced release of a snoozed job; throws ClaimLostError if the claim was lost. With `pause.queue`,
 * the job's queue is paused for as long in the same short transaction (re-run whole after a
 * transient conflict): a lost claim pauses nothing. With `pause.group`, its group is paused in that
 * transaction (its group read under the fence first), then the group's waiting jobs are moved past
 * the pause in bounded batches after the commit (pauseGroupFor.ts).
 */
export async function snoozeJob(
  db: Executor,
  tables: Tables,
  job: { id: number; queue: string; lockId: string },
  delayMs: number,
  pause: { readonly queue: boolean; readonly group: boolean },
): Promise<void> {
  if (!pause.queue && !pause.group) return release(db, tables, job, delayMs);
  const walk = await withTransaction(db, async (tx) => {
    const paused = pause.group ? await pauseGroupFor(tx, tables, job, delayMs) : null;
    await release(tx, tables, job, delayMs);
    if (pause.queue) await pauseQueueFor(tx, tables, job.queue, delayMs);
    return paused;
  });
  if (walk !== null) await moveGroupJobs(db, tables, job.queue, walk, job.id);
}

async function release(
  db: Executor,
  tables: Tables,
  job: { id: number; lockId: string },
  delayMs: number,
): Promise<void> {
  const { affectedRows } = await db.write(sqlSnooze(tables), [Math.round(delayMs * 1000), job.id, job.lockId]);
  if (affectedRows !== 1) throw new ClaimLostError('snooze', job.lockId, [job.id], 1);
}
