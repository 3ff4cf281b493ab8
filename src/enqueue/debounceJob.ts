import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';
import { HELD_RUN_AT } from '../model/heldRunAt.ts';
import { rowPayload, storedApart } from '../model/storedPayload.ts';
import type { NormalizedJob } from '../model/validateJob.ts';

/**
 * Params: ?1 queue, ?2 key. Creates the key's row or leaves it as it is, and in both cases locks it
 * until the enqueue commits: debounced enqueues of one key take turns here, so the last to commit
 * is the last to write (the lock wait is bounded at 2 s; a 1205 re-runs the enqueue).
 */
const sqlLockKey = (t: Tables) => `
/*M!100300 SET STATEMENT innodb_lock_wait_timeout = 2 FOR */
INSERT /*+ SET_VAR(innodb_lock_wait_timeout = 2) */ INTO ${t.jobDebounces} (queue, debounce_key, job_id, first_at)
VALUES (?, ?, 0, NOW(3))
ON DUPLICATE KEY UPDATE job_id = job_id`;

/**
 * Params: ?1 queue, ?2 key. The job waiting for the key (0: none yet), when it was first enqueued,
 * and the DB clock, in epoch ms. A locking read: inside an application's REPEATABLE READ
 * transaction a plain read could see an older row than the one just locked.
 */
const sqlReadKey = (t: Tables) => `
SELECT job_id,
       FLOOR(UNIX_TIMESTAMP(first_at) * 1000) AS first_ms,
       FLOOR(UNIX_TIMESTAMP(NOW(3)) * 1000) AS now_ms
FROM ${t.jobDebounces}
WHERE queue = ?
  AND debounce_key = ?
FOR UPDATE`;

/**
 * Params: ?1 name, ?2 payload (or '' when stored apart), ?3 priority, ?4 run_at, ?5 id. Replaces a
 * waiting job's name, payload and priority and moves its start. Matches only a job not started
 * (free, not held back): returns affectedRows 1, or 0 when it was claimed or is gone.
 */
const sqlReplace = (t: Tables) => `
UPDATE ${t.jobs}
SET name = ?,
    payload = ?,
    priority = ?,
    run_at = ?
WHERE id = ?
  AND lock_id = ''
  AND run_at < '${HELD_RUN_AT}'`;

/** Params: ?1 job id, ?2 payload. The replaced payload, stored apart (upsert by primary key). */
const sqlStoreApart = (t: Tables) => `
INSERT INTO ${t.jobPayloads} (job_id, payload)
VALUES (?, ?)
ON DUPLICATE KEY UPDATE payload = VALUES(payload)`;

/** Params: ?1 job id. Drops the payload stored apart of a job whose new payload fits in its row. */
const sqlDropApart = (t: Tables) => `
DELETE FROM ${t.jobPayloads}
WHERE job_id = ?`;

/** Params: ?1 job id, ?2 queue, ?3 key. Points the key at the job just written for it; its wait starts now. */
const sqlPoint = (t: Tables) => `
UPDATE ${t.jobDebounces}
SET job_id = ?,
    first_at = NOW(3)
WHERE queue = ?
  AND debounce_key = ?`;

/** What a debounced enqueue found: the waiting job it replaced, or a start for the new job to write. */
export type DebounceOutcome =
  | { readonly replaced: true; readonly id: number }
  | { readonly replaced: false; readonly startAtMs: number };

/**
 * Inside the enqueue's transaction, before its INSERT: locks the key and, if a job of the key is
 * still waiting, gives it this job's name, payload and priority and moves its start to NOW +
 * delayMs (at most first enqueue + maxWaitMs). Otherwise (no job yet, or it started) the caller
 * writes the job at `startAtMs` and then calls pointDebounce with its id.
 */
export async function debounceJob(
  tx: Executor,
  tables: Tables,
  job: NormalizedJob & { flow: { debounce: { key: string; delayMs: number; maxWaitMs: number | null } } },
): Promise<DebounceOutcome> {
  const { key, delayMs, maxWaitMs } = job.flow.debounce;
  await tx.write(sqlLockKey(tables), [job.queue, key]);
  const [row] = await tx.select<{ job_id: number | string; first_ms: number | string; now_ms: number | string }>(
    sqlReadKey(tables),
    [job.queue, key],
  );
  const nowMs = Number(row?.now_ms);
  const waitingId = Number(row?.job_id ?? 0);
  if (waitingId > 0) {
    const capMs = maxWaitMs === null ? Number.POSITIVE_INFINITY : Number(row?.first_ms) + maxWaitMs;
    const startAt = new Date(Math.min(nowMs + delayMs, capMs));
    const apart = storedApart(job.storedPayload);
    const { affectedRows } = await tx.write(sqlReplace(tables), [
      job.name,
      rowPayload(job.storedPayload),
      job.priority,
      startAt,
      waitingId,
    ]);
    if (affectedRows === 1) {
      if (apart) await tx.write(sqlStoreApart(tables), [waitingId, job.storedPayload]);
      else await tx.write(sqlDropApart(tables), [waitingId]);
      return { replaced: true, id: waitingId };
    }
  }
  return { replaced: false, startAtMs: nowMs + delayMs };
}

/** After the INSERT of a debounced job that replaced none: the key now names it. */
export async function pointDebounce(tx: Executor, tables: Tables, job: NormalizedJob, jobId: number): Promise<void> {
  const key = job.flow.debounce?.key;
  if (key === undefined) return;
  await tx.write(sqlPoint(tables), [jobId, job.queue, key]);
}
