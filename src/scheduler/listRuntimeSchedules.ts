import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';
import { SCHEDULE_COLUMNS, type Schedule, type ScheduleRow, scheduleOf } from './scheduleRow.ts';

/** Params: ?1 after key (exclusive; '' for the first page), ?2 limit + 1. One page in key order (the primary key). */
const sqlPage = (t: Tables) => `
SELECT ${SCHEDULE_COLUMNS}
FROM ${t.schedules}
WHERE schedule_key > ?
ORDER BY schedule_key
LIMIT ?`;

/** Params: ?1 key. */
const sqlGet = (t: Tables) => `
SELECT ${SCHEDULE_COLUMNS}
FROM ${t.schedules}
WHERE schedule_key = ?`;

/** Most schedules one page holds. */
export const MAX_SCHEDULE_PAGE = 500;

export interface SchedulePage {
  readonly schedules: readonly Schedule[];
  /** The `after` of the next page, or null on the last one. */
  readonly next: string | null;
}

/** One page of run-time schedules in key order, after `after`: one bounded read of the primary key. */
export async function listRuntimeSchedules(
  db: Executor,
  tables: Tables,
  after: string,
  limit: number,
): Promise<SchedulePage> {
  const rows = await db.select<ScheduleRow>(sqlPage(tables), [after, limit + 1]);
  const page = rows.slice(0, limit).map(scheduleOf);
  return { schedules: page, next: rows.length > limit ? (page[page.length - 1]?.key ?? null) : null };
}

/** One run-time schedule by key, or null. */
export async function getRuntimeSchedule(db: Executor, tables: Tables, key: string): Promise<Schedule | null> {
  const [row] = await db.select<ScheduleRow>(sqlGet(tables), [key]);
  return row === undefined ? null : scheduleOf(row);
}
