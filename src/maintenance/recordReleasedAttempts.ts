import { escapeLike } from '../db/escapeLike.ts';
import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';
import { claimKeyOf } from '../model/claimKey.ts';

/**
 * Params: ?1 worker id or NULL, ?2 LIKE pattern of the claim's worker id or NULL, ?3 code, ?4 ids
 * (list: those sqlReleased found freed), then ?1–?3 again. Keeps, for each of those jobs, the
 * error of the attempt the release ended: attempt = the bumped retry_times, the message the release wrote into
 * last_error, the worker named or looked up in the registry by its claim key. affectedRows is not
 * checked (an upsert counts 1 or 2 per row).
 */
const sqlRecord = (t: Tables) => `
INSERT INTO ${t.jobErrors} (job_id, attempt, failed_at, worker_id, code, message, stack)
SELECT j.id, j.retry_times, NOW(3), COALESCE(?, (SELECT w.id FROM ${t.workers} w WHERE w.id LIKE ? LIMIT 1)), ?,
       COALESCE(j.last_error, ''), NULL
FROM ${t.jobs} j
WHERE j.id IN (?)
  AND j.lock_id = ''
ON DUPLICATE KEY UPDATE failed_at = NOW(3),
  worker_id = COALESCE(?, (SELECT w.id FROM ${t.workers} w WHERE w.id LIKE ? LIMIT 1)), code = ?,
  message = COALESCE(j.last_error, ''), stack = NULL`;

/**
 * Params: ?1 ids (list, locked by the caller's transaction). Those of the jobs that the release
 * just freed (lock_id ''; a job it left alone is still claimed), with their bumped retry_times: a
 * plain read of rows this transaction holds.
 */
const sqlReleased = (t: Tables) => `
SELECT id, retry_times
FROM ${t.jobs}
WHERE id IN (?)
  AND lock_id = ''`;

/**
 * Params: (job id, newest attempt to drop) for each of `jobs` jobs. Drops the rows of those
 * jobs' attempts older than the kept ones, in `table` (job_errors or job_logs): primary-key
 * ranges. (Not a join with the jobs table: a multi-table DELETE locks the jobs rows it reads,
 * and would wait on a claim another transaction holds — measured.)
 */
const sqlTrim = (table: string, jobs: number) => `
DELETE FROM ${table}
WHERE ${Array.from({ length: jobs }, () => '(job_id = ? AND attempt <= ?)').join('\n   OR ')}`;

/** Whose attempt a release ended: the dead worker it judged, or the claim that expired (its worker looked up). */
export type ReleasedBy = { readonly workerId: string } | { readonly lockId: string };

/** The code of an attempt that ended because the maintenance process took its claim back. */
export const RELEASED_CODES = { workerDied: 'SLUICE_WORKER_DIED', claimExpired: 'SLUICE_CLAIM_EXPIRED' } as const;

/**
 * Records the attempts a maintenance release ended — "the worker stopped heartbeating (died)",
 * "the claim expired" — as errors of those attempts, and trims the jobs' errors and log lines to
 * their latest `keep` attempts (only jobs past that many: usually no statement). Call it inside
 * the release's transaction, after its UPDATE: it writes only for the jobs that UPDATE freed, so
 * a release that changed nothing records nothing (one read). Nothing at all when `keep` is 0.
 */
export async function recordReleasedAttempts(
  tx: Executor,
  tables: Tables,
  ids: readonly number[],
  by: ReleasedBy,
  keep: number,
): Promise<void> {
  if (keep === 0 || ids.length === 0) return;
  const released = await tx.select<{ id: number; retry_times: number }>(sqlReleased(tables), [ids]);
  if (released.length === 0) return;
  const who =
    'workerId' in by
      ? [by.workerId, null, RELEASED_CODES.workerDied]
      : [null, `%~${escapeLike(claimKeyOf(by.lockId))}`, RELEASED_CODES.claimExpired];
  await tx.write(sqlRecord(tables), [...who, released.map((r) => Number(r.id)), ...who]);
  const trims = released.filter((r) => r.retry_times > keep).flatMap((r) => [Number(r.id), r.retry_times - keep]);
  if (trims.length === 0) return;
  await tx.write(sqlTrim(tables.jobErrors, trims.length / 2), trims);
  await tx.write(sqlTrim(tables.jobLogs, trims.length / 2), trims);
}
