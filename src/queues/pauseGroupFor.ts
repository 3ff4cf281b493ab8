import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';
import { HELD_RUN_AT } from '../model/heldRunAt.ts';

/**
 * Params: ?1 job id, ?2 lock id. The group of a job this worker still holds (the fence): null when it
 * has none, no row when the claim was lost.
 */
const sqlGroupOf = (t: Tables) => `
SELECT group_key
FROM ${t.jobs}
WHERE id = ?
  AND lock_id = ?`;

/**
 * Params: ?1 queue, ?2 group. Creates the group's row if it has none and locks it; the lock wait is
 * bounded at 2 s (an enqueue of the group holds the row only for its own short transaction).
 */
const sqlLockGroup = (t: Tables) => `
/*M!100300 SET STATEMENT innodb_lock_wait_timeout = 2 FOR */
INSERT /*+ SET_VAR(innodb_lock_wait_timeout = 2) */ INTO ${t.jobGroups} (queue, group_key, updated_at)
VALUES (?, ?, NOW(3))
ON DUPLICATE KEY UPDATE updated_at = NOW(3)`;

/**
 * Params: ?1 queue, ?2 group. The group's rate and whether it is paused already (a pause still to
 * come), and the DB clock: epoch ms. Its row is locked by this transaction.
 */
const sqlReadGroup = (t: Tables) => `
SELECT g.rate_limit, g.rate_interval_ms, q.group_rate_interval_ms,
       g.paused_until > NOW(3) AS paused,
       FLOOR(UNIX_TIMESTAMP(NOW(3)) * 1000) AS now_ms
FROM ${t.jobGroups} g
LEFT JOIN ${t.queues} q ON q.queue = g.queue
WHERE g.queue = ?
  AND g.group_key = ?`;

/**
 * Params: ?1 until (DATETIME), ?2 shift (ms), ?3 queue, ?4 group. Pauses the group until then (a
 * later pause already set is kept) and moves its reservation cursor by the shift, so the next job
 * enqueued reserves from the pause's end on.
 */
const sqlPause = (t: Tables) => `
UPDATE ${t.jobGroups}
SET paused_until = GREATEST(COALESCE(paused_until, ?), ?),
    rate_window_ms = rate_window_ms + ?
WHERE queue = ?
  AND group_key = ?`;

/**
 * Params: ?1 queue, ?2 group, ?3 after id, ?4 up to id, ?5 limit. A bounded batch of the group's
 * jobs, in id order, through job_group_members' primary key (queue, group_key, job_id). A plain read.
 */
const sqlWaiting = (t: Tables) => `
SELECT job_id AS id
FROM ${t.jobGroupMembers}
WHERE queue = ?
  AND group_key = ?
  AND job_id > ?
  AND job_id <= ?
ORDER BY job_id
LIMIT ?`;

/**
 * Params: ?1 shift (µs), ?2 until, ?3 ids (list). Moves waiting jobs of the group: a rated group's
 * by the shift (whole rate intervals, so each keeps its reserved place relative to the others and
 * the rate still holds after the pause), any other's to the pause's end if due before it. Matches
 * only jobs still free and not held back. affectedRows = jobs moved.
 */
const sqlShift = (t: Tables) => `
UPDATE ${t.jobs}
SET run_at = GREATEST(run_at + INTERVAL ? MICROSECOND, ?)
WHERE id IN (?)
  AND lock_id = ''
  AND run_at < '${HELD_RUN_AT}'`;

/** Params: none. The newest job id: the end of the walk (jobs written later reserve past the pause). */
const sqlMaxId = (t: Tables) => `
SELECT COALESCE(MAX(id), 0) AS id
FROM ${t.jobs}`;

/** Jobs moved per statement. */
const BATCH = 1_000;

/**
 * Step 1, inside the snooze's transaction: finds the snoozing job's group (fenced by its claim) and
 * pauses it for `ms`: new jobs of the group reserve their start after the pause. Returns what the
 * walk of step 2 needs, or null when the job has no group or the group was already paused (its
 * jobs were moved then: moving them again would double the wait).
 */
export async function pauseGroupFor(
  tx: Executor,
  tables: Tables,
  job: { id: number; queue: string; lockId: string },
  ms: number,
): Promise<{ group: string; untilMs: number; shiftMs: number; upToId: number } | null> {
  const [own] = await tx.select<{ group_key: string | null }>(sqlGroupOf(tables), [job.id, job.lockId]);
  const group = own?.group_key ?? null;
  if (group === null) return null;
  await tx.write(sqlLockGroup(tables), [job.queue, group]);
  const [row] = await tx.select<{
    rate_limit: number | null;
    rate_interval_ms: number | null;
    group_rate_interval_ms: number | null;
    paused: number | null;
    now_ms: number | string;
  }>(sqlReadGroup(tables), [job.queue, group]);
  const nowMs = Number(row?.now_ms);
  const intervalMs = Number(
    (row?.rate_limit !== null ? row?.rate_interval_ms : null) ?? row?.group_rate_interval_ms ?? 0,
  );
  // A rated group's jobs move by whole intervals: their windows stay aligned and each keeps its place.
  const shiftMs = intervalMs > 0 ? Math.ceil(ms / intervalMs) * intervalMs : 0;
  const untilMs = nowMs + ms;
  const until = new Date(untilMs);
  const already = Number(row?.paused ?? 0) === 1;
  await tx.write(sqlPause(tables), [until, until, already ? 0 : shiftMs, job.queue, group]);
  if (already) return null;
  const [max] = await tx.select<{ id: number | string }>(sqlMaxId(tables));
  return { group, untilMs, shiftMs, upToId: Number(max?.id ?? 0) };
}

/**
 * Step 2, after the snooze committed: moves the group's waiting jobs (ids up to the newest at the
 * pause) in bounded autocommit batches found through job_group_members. Jobs enqueued since reserve
 * past the pause by themselves. Returns the jobs moved.
 */
export async function moveGroupJobs(
  db: Executor,
  tables: Tables,
  queue: string,
  walk: { group: string; untilMs: number; shiftMs: number; upToId: number },
  skipId: number,
): Promise<number> {
  let after = 0;
  let moved = 0;
  const until = new Date(walk.untilMs);
  for (;;) {
    const rows = await db.select<{ id: number | string }>(sqlWaiting(tables), [
      queue,
      walk.group,
      after,
      walk.upToId,
      BATCH,
    ]);
    const ids = rows.map((r) => Number(r.id)).filter((id) => id !== skipId);
    if (ids.length > 0) moved += (await db.write(sqlShift(tables), [walk.shiftMs * 1000, until, ids])).affectedRows;
    if (rows.length < BATCH) return moved;
    after = Number(rows[rows.length - 1]?.id);
  }
}
