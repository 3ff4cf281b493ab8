import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';
import { HELD_RUN_AT } from '../model/heldRunAt.ts';

/** Held jobs one settle releases at most (a bounded statement); reconcileGroups releases the rest. */
export const RELEASE_PAGE = 1_000;

/**
 * A fair window is refilled once its group's live jobs are at most this share of it. Lower: fewer,
 * bigger releases; higher: more slack for the settle's own latency (a worker settles after its
 * interval, and a loaded host stretches each settle to tens or hundreds of ms), during which the
 * group's workers drain what is left of the window. Three quarters: a dominant group costs one
 * release per quarter window (125 jobs by default) and keeps a quarter window in hand meanwhile.
 */
const REFILL_BELOW = 3 / 4;

/**
 * Params: ?1 queue, ?2 group, ?3 limit given (or NULL), ?4 the same, ?5 the same. Creates the
 * group's row if it has none, writes the limit a job or an operator gave (NULL: the row's stays),
 * and locks the row for the rest of the transaction: every change of the group's slots takes it in
 * turn. The lock wait is bounded at 2 s (MariaDB SET STATEMENT; MySQL 8 SET_VAR, not run here:
 * only MariaDB 10.11 runs on this machine); a timeout (1205) re-runs the transaction.
 */
const sqlLockGroup = (t: Tables) => `
/*M!100300 SET STATEMENT innodb_lock_wait_timeout = 2 FOR */
INSERT /*+ SET_VAR(innodb_lock_wait_timeout = 2) */ INTO ${t.jobGroups} (queue, group_key, concurrency_limit, active, updated_at)
VALUES (?, ?, ?, 0, NOW(3))
ON DUPLICATE KEY UPDATE concurrency_limit = IF(? IS NULL, concurrency_limit, ?)`;

/**
 * Params: ?1 queue, ?2 group. The locked row's limit in force — its own, else the queue's default
 * group concurrency, else the queue's fair window (all NULL: none) —, whether that is the fair
 * window (a soft bound), and its slots taken.
 */
const sqlReadGroup = (t: Tables) => `
SELECT COALESCE(g.concurrency_limit, q.group_concurrency, q.fair_window) AS effective_limit,
       g.concurrency_limit IS NULL AND q.group_concurrency IS NULL AND q.fair_window IS NOT NULL AS fair,
       g.active
FROM ${t.jobGroups} g
LEFT JOIN ${t.queues} q ON q.queue = g.queue
WHERE g.queue = ?
  AND g.group_key = ?`;

/**
 * Params: ?1 queue, ?2 group, ?3 limit. The group's next held jobs, in the order they start:
 * priority, then intended run_at, then id — the first entries of its range of ix_group, locked.
 * A hold row an enqueue has not committed yet is waited for at most 2 s (as the group's lock): that
 * enqueue locks the group's row next, which the server then sees as a deadlock and breaks at once.
 */
const sqlNextHeld = (t: Tables) => `
/*M!100300 SET STATEMENT innodb_lock_wait_timeout = 2 FOR */
SELECT /*+ SET_VAR(innodb_lock_wait_timeout = 2) */ job_id
FROM ${t.jobHolds}
WHERE queue = ?
  AND group_key = ?
ORDER BY priority, run_at, job_id
LIMIT ?
FOR UPDATE`;

/**
 * Params: ?1 ids (list, locked holds). Releases held jobs: run_at from the sentinel back to their
 * intended time, or now if that has passed (a released job of a big group queues behind what other
 * groups enqueued meanwhile). Fenced on the sentinel and a free row. Returns affectedRows = released.
 */
const sqlRelease = (t: Tables) => `
UPDATE ${t.jobs} j
JOIN ${t.jobHolds} h ON h.job_id = j.id
SET j.run_at = GREATEST(h.run_at, NOW(3))
WHERE j.id IN (?)
  AND j.run_at = '${HELD_RUN_AT}'
  AND j.lock_id = ''`;

/** Params: ?1 ids (list). Their holds are over (released, or their job is gone). */
const sqlDropHolds = (t: Tables) => `
DELETE FROM ${t.jobHolds}
WHERE job_id IN (?)`;

/**
 * Params: ?1 active, ?2 queue, ?3 group. The group's slots taken, after the change, and when it last
 * moved (a group whose row does not move for a while is one reconcileGroups recounts).
 */
const sqlSetActive = (t: Tables) => `
UPDATE ${t.jobGroups}
SET active = ?,
    updated_at = NOW(3)
WHERE queue = ?
  AND group_key = ?`;

/** A change to one group's slots, inside the caller's transaction. */
export interface GroupChange {
  readonly queue: string;
  readonly group: string;
  /** Slots given back: the group's jobs that left the live table while holding one. */
  readonly freed: number;
  /** A concurrency limit to write onto the group (a job's or an operator's), or null to keep the row's. */
  readonly limit: number | null;
}

/**
 * The one place a group's slots change: locks the group's row (creating it), counts the freed slots
 * off, then releases the group's next held jobs while it has room under its limit in force (no
 * limit: up to RELEASE_PAGE, as the jobs were held under a limit since removed), each released job
 * taking a slot. A freed slot thus passes to the next held job with the row unchanged. Returns how
 * many jobs it released (the caller rings the queue after the commit). Statements: the lock, one
 * read, and with held jobs to release one indexed read of ix_group, one UPDATE, one DELETE; then
 * one UPDATE of the row.
 *
 * A fair window (no concurrency limit in force) is a soft bound that only keeps one group from
 * flooding the claim's head range, so it is refilled with hysteresis: nothing is released while the
 * group still has more than REFILL_BELOW of its window live, and then it is refilled to the whole
 * window in one page. A dominant group thus costs one release per quarter window, not one per job; its
 * completions settle lazily, after their commit (src/worker/FairGroupSettler.ts).
 */
export async function settleGroup(tx: Executor, tables: Tables, change: GroupChange): Promise<number> {
  const { queue, group, limit } = change;
  await tx.write(sqlLockGroup(tables), [queue, group, limit, limit, limit]);
  const [row] = await tx.select<{
    effective_limit: number | string | null;
    fair: number | string | null;
    active: number | string;
  }>(sqlReadGroup(tables), [queue, group]);
  const was = Number(row?.active ?? 0);
  const active = Math.max(0, was - change.freed);
  const ceiling = row?.effective_limit == null ? null : Number(row.effective_limit);
  const refill = ceiling === null || Number(row?.fair) !== 1 || active <= ceiling * REFILL_BELOW;
  const room = !refill ? 0 : ceiling === null ? RELEASE_PAGE : Math.min(RELEASE_PAGE, ceiling - active);
  let released = 0;
  if (room > 0) {
    const held = (await tx.select<{ job_id: number | string }>(sqlNextHeld(tables), [queue, group, room])).map((r) =>
      Number(r.job_id),
    );
    if (held.length > 0) {
      released = (await tx.write(sqlRelease(tables), [held])).affectedRows;
      await tx.write(sqlDropHolds(tables), [held]);
    }
  }
  if (active + released !== was || change.freed > 0 || released > 0)
    await tx.write(sqlSetActive(tables), [active + released, queue, group]);
  return released;
}
