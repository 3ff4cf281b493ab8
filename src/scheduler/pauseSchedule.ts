import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';
import { withTransaction } from '../db/transaction.ts';
import { firstTickAfter } from '../model/firstTick.ts';
import { tickRuleOf } from '../model/scheduleSpec.ts';
import { ruleFieldsOf, SCHEDULE_COLUMNS, type ScheduleRow } from './scheduleRow.ts';
import { sqlDeleteRuns } from './scheduleRuns.ts';

/** Params: ?1 key. Pauses: no next run while paused. affectedRows 1, or 0 if unknown or paused already. */
const sqlPause = (t: Tables) => `
/*M!100300 SET STATEMENT innodb_lock_wait_timeout = 2 FOR */
UPDATE /*+ SET_VAR(innodb_lock_wait_timeout = 2) */ ${t.schedules}
SET paused = TRUE, next_run_at = NULL, revision = revision + 1, updated_at = NOW(3)
WHERE schedule_key = ?
  AND paused = FALSE`;

/** Params: ?1 key. A paused schedule, locked, with the database's clock. */
const sqlReadPaused = (t: Tables) => `
/*M!100300 SET STATEMENT innodb_lock_wait_timeout = 2 FOR */
SELECT /*+ SET_VAR(innodb_lock_wait_timeout = 2) */ ${SCHEDULE_COLUMNS}, NOW(3) AS db_now
FROM ${t.schedules}
WHERE schedule_key = ?
  AND paused = TRUE
FOR UPDATE`;

/** Params: ?1 next run, ?2 key, ?3 revision. Resumes, fenced by the revision read. */
const sqlResume = (t: Tables) => `
UPDATE ${t.schedules}
SET paused = FALSE, next_run_at = ?, revision = revision + 1, updated_at = NOW(3)
WHERE schedule_key = ?
  AND revision = ?`;

/** Params: ?1 key. Deletes a schedule (its runs go in the same transaction). */
const sqlRemove = (t: Tables) => `
/*M!100300 SET STATEMENT innodb_lock_wait_timeout = 2 FOR */
DELETE /*+ SET_VAR(innodb_lock_wait_timeout = 2) */ FROM ${t.schedules}
WHERE schedule_key = ?`;

/** Pauses a schedule: it fires nothing until resumed. False when the key is unknown or already paused. */
export async function pauseSchedule(db: Executor, tables: Tables, key: string): Promise<boolean> {
  return (await db.write(sqlPause(tables), [key])).affectedRows === 1;
}

/**
 * Resumes a paused schedule. What it missed while paused follows its `missed`: with 'skip' the
 * next run is the first tick after now; with 'once' and 'all' the ticks since the last one fired
 * are due at once, and the next pass fires one of them or all. False when unknown or not paused.
 */
export async function resumeSchedule(db: Executor, tables: Tables, key: string): Promise<boolean> {
  return withTransaction(db, async (tx) => {
    const [row] = await tx.select<ScheduleRow & { db_now: Date }>(sqlReadPaused(tables), [key]);
    if (row === undefined) return false;
    const now = row.db_now.getTime();
    const after = row.missed === 'skip' || row.last_tick_at === null ? now : row.last_tick_at.getTime();
    const bounds = { startAt: row.start_at, endAt: row.end_at, limit: row.run_limit, runs: Number(row.runs) };
    const tick = firstTickAfter(tickRuleOf(ruleFieldsOf(row)), after, bounds);
    const { affectedRows } = await tx.write(sqlResume(tables), [
      tick === null ? null : new Date(tick),
      key,
      row.revision,
    ]);
    return affectedRows === 1;
  });
}

/** Removes a schedule and its runs (its jobs already enqueued stay). False when the key is unknown. */
export async function removeSchedule(db: Executor, tables: Tables, key: string): Promise<boolean> {
  return withTransaction(db, async (tx) => {
    const { affectedRows } = await tx.write(sqlRemove(tables), [key]);
    await tx.write(sqlDeleteRuns(tables), [key]);
    return affectedRows === 1;
  });
}
