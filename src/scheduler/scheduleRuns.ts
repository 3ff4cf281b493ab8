import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';

/** Runs kept per schedule (its latest jobs); the fire that records a newer one deletes the oldest. */
export const RUNS_KEPT = 20;

/**
 * Params: per schedule, ?key ?seq. Deletes each schedule's runs at or below that run number: a
 * range of the primary key per schedule (at most the runs one fire added).
 */
export const pruneRunsSql = (t: Tables, schedules: number) => `
DELETE FROM ${t.scheduleRuns}
WHERE ${Array.from({ length: schedules }, () => '(schedule_key = ? AND seq <= ?)').join('\n  OR ')}`;

/** Params: ?1 key, ?2 limit. The latest runs of one schedule, newest first (the primary key's range). */
const sqlRuns = (t: Tables) => `
SELECT seq, tick_at, job_id, queue, fired_at
FROM ${t.scheduleRuns}
WHERE schedule_key = ?
ORDER BY seq DESC
LIMIT ?`;

/** Params: ?1 key. Deletes a removed schedule's runs (at most RUNS_KEPT plus one fire's). */
export const sqlDeleteRuns = (t: Tables) => `
DELETE FROM ${t.scheduleRuns}
WHERE schedule_key = ?`;

/** One job a schedule fired. */
export interface ScheduleRun {
  /** Its run number: 1 for the schedule's first job. */
  readonly seq: number;
  /** The tick it was fired for. */
  readonly tickAt: Date;
  /** null when its idempotency key was pruned before the fire read it back (never in practice). */
  readonly jobId: number | null;
  readonly queue: string;
  readonly firedAt: Date;
}

/** The latest `limit` (at most RUNS_KEPT) runs of a schedule, newest first. */
export async function listScheduleRuns(
  db: Executor,
  tables: Tables,
  key: string,
  limit = RUNS_KEPT,
): Promise<ScheduleRun[]> {
  const rows = await db.select<{
    seq: number;
    tick_at: Date;
    job_id: number | string | null;
    queue: string;
    fired_at: Date;
  }>(sqlRuns(tables), [key, Math.min(Math.max(1, Math.floor(limit)), RUNS_KEPT)]);
  return rows.map((r) => ({
    seq: Number(r.seq),
    tickAt: r.tick_at,
    jobId: r.job_id === null ? null : Number(r.job_id),
    queue: r.queue,
    firedAt: r.fired_at,
  }));
}
