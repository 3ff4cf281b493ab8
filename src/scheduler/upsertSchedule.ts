import type { Executor } from '../db/executor.ts';
import { isDuplicateKey } from '../db/mysqlErrors.ts';
import type { Tables } from '../db/tables.ts';
import { withTransaction } from '../db/transaction.ts';
import { firstTickAfter } from '../model/firstTick.ts';
import { type NormalizedSchedule, tickRuleOf } from '../model/scheduleSpec.ts';
import { SCHEDULE_COLUMNS, type Schedule, type ScheduleRow, scheduleOf } from './scheduleRow.ts';

/**
 * Params: ?1 key. The schedule and the database's clock; the row locked for this transaction,
 * waiting at most 2 s for a fire that holds it.
 */
const sqlRead = (t: Tables) => `
/*M!100300 SET STATEMENT innodb_lock_wait_timeout = 2 FOR */
SELECT /*+ SET_VAR(innodb_lock_wait_timeout = 2) */ ${SCHEDULE_COLUMNS}, NOW(3) AS db_now
FROM ${t.schedules}
WHERE schedule_key = ?
FOR UPDATE`;

/** Params: none. The database's clock. */
const sqlNow = 'SELECT NOW(3) AS db_now';

/** Params: the new row's fields in column order. Fails with 1062 if another upsert made the key first. */
const sqlInsert = (t: Tables) => `
INSERT INTO ${t.schedules}
  (schedule_key, job_name, queue, cron, every_ms, tz, payload, start_at, end_at, run_limit, missed, next_run_at, created_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`;

/** Params: the fields, then ?key ?revision. Fenced by the revision read. affectedRows 1, or 0 if it changed meanwhile. */
const sqlUpdate = (t: Tables) => `
UPDATE ${t.schedules}
SET job_name = ?, queue = ?, cron = ?, every_ms = ?, tz = ?, payload = ?, start_at = ?, end_at = ?,
    run_limit = ?, missed = ?, next_run_at = ?, revision = revision + 1, updated_at = NOW(3)
WHERE schedule_key = ?
  AND revision = ?`;

const sqlGet = (t: Tables) => `
SELECT ${SCHEDULE_COLUMNS}
FROM ${t.schedules}
WHERE schedule_key = ?`;

export interface UpsertResult {
  readonly schedule: Schedule;
  /** True when the key was new. */
  readonly created: boolean;
}

/**
 * Creates or changes a run-time schedule, in one short transaction on the database clock. A new
 * schedule's next run is its first tick after now (and at or after startAt). An upsert that
 * leaves the timing as it was (cron, every, tz, startAt) keeps next_run_at, so an application
 * that upserts its schedules at every start neither skips nor repeats a tick; one that changes it
 * starts again from the first tick after now (never at or before the last tick fired). A paused
 * schedule stays paused.
 */
export async function upsertSchedule(db: Executor, tables: Tables, spec: NormalizedSchedule): Promise<UpsertResult> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await withTransaction(db, (tx) => upsertOnce(tx, tables, spec));
    } catch (error) {
      // Two upserts of a new key at once: the loser reads the winner's row and updates it.
      if (!isDuplicateKey(error) || attempt >= 3) throw error;
    }
  }
}

async function upsertOnce(tx: Executor, tables: Tables, spec: NormalizedSchedule): Promise<UpsertResult> {
  const [read] = await tx.select<ScheduleRow & { db_now: Date }>(sqlRead(tables), [spec.key]);
  const existing = read ?? null;
  const now = existing?.db_now ?? ((await tx.select<{ db_now: Date }>(sqlNow))[0] as { db_now: Date }).db_now;
  const fields = [spec.cron, spec.everyMs, spec.tz, spec.payload, spec.startAt, spec.endAt, spec.limit, spec.missed];
  if (existing === null) {
    const rule = tickRuleOf({ ...spec, createdAt: now });
    const next = firstTickAfter(rule, now.getTime(), { ...spec, runs: 0 });
    await tx.write(sqlInsert(tables), [
      spec.key,
      spec.jobName,
      spec.queue,
      ...fields,
      next === null ? null : new Date(next),
      now,
    ]);
    return { schedule: await get(tx, tables, spec.key), created: true };
  }
  const sameTiming =
    existing.cron === spec.cron &&
    (existing.every_ms === null ? null : Number(existing.every_ms)) === spec.everyMs &&
    existing.tz === spec.tz &&
    (existing.start_at?.getTime() ?? null) === (spec.startAt?.getTime() ?? null);
  let next: Date | null = null;
  if (!existing.paused) {
    const rule = tickRuleOf({ ...spec, createdAt: existing.created_at });
    const bounds = { ...spec, runs: Number(existing.runs) };
    const after = Math.max(now.getTime(), existing.last_tick_at?.getTime() ?? 0);
    const kept = sameTiming && existing.next_run_at !== null ? existing.next_run_at.getTime() - 1 : null;
    const tick = firstTickAfter(rule, kept ?? after, bounds);
    next = tick === null ? null : new Date(tick);
  }
  const { affectedRows } = await tx.write(sqlUpdate(tables), [
    spec.jobName,
    spec.queue,
    ...fields,
    next,
    spec.key,
    existing.revision,
  ]);
  if (affectedRows !== 1) throw new Error(`schedule ${spec.key} changed while it was upserted`);
  return { schedule: await get(tx, tables, spec.key), created: false };
}

async function get(tx: Executor, tables: Tables, key: string): Promise<Schedule> {
  const [row] = await tx.select<ScheduleRow>(sqlGet(tables), [key]);
  return scheduleOf(row as ScheduleRow);
}
