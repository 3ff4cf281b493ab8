import { escapeLike } from '../db/escapeLike.ts';
import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';
import { claimKeyOf } from '../model/claimKey.ts';

/**
 * Params: ?1 worker id or NULL, ?2 LIKE pattern of the claim's worker id or NULL, ?3 code, ?4 ids
 * (list, locked by the caller's transaction), then ?1–?3 again. Keeps, for each of those jobs the
 * release just freed (lock_id '' — a job the release left alone is still claimed), the error of
 * the attempt it ended: attempt = the bumped retry_times, the message the release wrote into
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

/** Params: ?1 ids (list), ?2 attempts kept. Drops the errors of those jobs' attempts older than the kept ones. */
const sqlTrimErrors = (t: Tables) => `
DELETE e
FROM ${t.jobErrors} e
JOIN ${t.jobs} j ON j.id = e.job_id
WHERE j.id IN (?)
  AND e.attempt + ? <= j.retry_times`;

/** Params: ?1 ids (list), ?2 attempts kept. Drops the log lines of those jobs' attempts older than the kept ones. */
const sqlTrimLogs = (t: Tables) => `
DELETE l
FROM ${t.jobLogs} l
JOIN ${t.jobs} j ON j.id = l.job_id
WHERE j.id IN (?)
  AND l.attempt + ? <= j.retry_times`;

/** Whose attempt a release ended: the dead worker it judged, or the claim that expired (its worker looked up). */
export type ReleasedBy = { readonly workerId: string } | { readonly lockId: string };

/** The code of an attempt that ended because the maintenance process took its claim back. */
export const RELEASED_CODES = { workerDied: 'SLUICE_WORKER_DIED', claimExpired: 'SLUICE_CLAIM_EXPIRED' } as const;

/**
 * Records the attempts a maintenance release ended — "the worker stopped heartbeating (died)",
 * "the claim expired" — as errors of those attempts, and trims the jobs' errors and log lines to
 * their latest `keep` attempts. Call it inside the release's transaction, after its UPDATE: it
 * writes only for the jobs that UPDATE freed, so a release that changed nothing records nothing.
 * Nothing at all when `keep` is 0.
 */
export async function recordReleasedAttempts(
  tx: Executor,
  tables: Tables,
  ids: readonly number[],
  by: ReleasedBy,
  keep: number,
): Promise<void> {
  if (keep === 0 || ids.length === 0) return;
  const who =
    'workerId' in by
      ? [by.workerId, null, RELEASED_CODES.workerDied]
      : [null, `%~${escapeLike(claimKeyOf(by.lockId))}`, RELEASED_CODES.claimExpired];
  await tx.write(sqlRecord(tables), [...who, ids, ...who]);
  await tx.write(sqlTrimErrors(tables), [ids, keep]);
  await tx.write(sqlTrimLogs(tables), [ids, keep]);
}
