import type { Executor } from '../../db/executor.ts';
import type { Tables } from '../../db/tables.ts';
import { valuesTable } from '../../db/valuesTable.ts';

/**
 * Params: (job id, progress JSON) for each of `rows` rows, then ?lockId, ?ids (list). Upserts the
 * progress rows of those jobs this claim still holds: the join with the live row is the fence (a
 * job whose claim was lost or that was cancelled gets nothing written). affectedRows is not a count
 * of jobs (an upsert counts 1 or 2 per row) and is not checked: the extend that runs just before,
 * in the same beat, is what reports lost claims. Autocommit: re-run by the Executor after a
 * transient conflict.
 */
const sqlWriteProgress = (t: Tables, rows: number) => `
INSERT INTO ${t.jobProgress} (job_id, progress, updated_at)
SELECT j.id, p.progress, NOW(3)
FROM (${valuesTable(['id', 'progress'], rows)}) p
JOIN ${t.jobs} j ON j.id = p.id
WHERE j.lock_id = ?
  AND j.id IN (?)
ON DUPLICATE KEY UPDATE progress = p.progress, updated_at = NOW(3)`;

/**
 * The heartbeat's progress write for one claim: one statement for every job of the claim whose
 * progress changed since the last beat (jobs that never report progress are never in it, and a
 * beat with no change sends nothing).
 */
export async function writeProgress(
  db: Executor,
  tables: Tables,
  lockId: string,
  progress: ReadonlyMap<number, string>,
): Promise<void> {
  if (progress.size === 0) return;
  await db.write(sqlWriteProgress(tables, progress.size), [...[...progress].flat(), lockId, [...progress.keys()]]);
}
