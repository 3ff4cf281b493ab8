import type { MissedTicks } from '../model/scheduleSpec.ts';

/** The columns every read of a schedule selects, in this order. */
export const SCHEDULE_COLUMNS = `schedule_key, job_name, queue, cron, every_ms, tz, payload, start_at, end_at, run_limit,
  missed, paused, next_run_at, runs, last_tick_at, last_job_id, revision, created_at, updated_at`;

/** One row of the schedules table, as the driver returns it. */
export interface ScheduleRow {
  schedule_key: string;
  job_name: string;
  queue: string;
  cron: string | null;
  every_ms: number | string | null;
  tz: string | null;
  payload: string;
  start_at: Date | null;
  end_at: Date | null;
  run_limit: number | null;
  missed: string;
  paused: number | boolean;
  next_run_at: Date | null;
  runs: number;
  last_tick_at: Date | null;
  last_job_id: number | string | null;
  revision: number;
  created_at: Date;
  updated_at: Date;
}

/** A run-time schedule, as `sluice.schedules.list/get` return it. */
export interface Schedule {
  readonly key: string;
  readonly job: string;
  readonly queue: string;
  readonly cron: string | null;
  readonly every: number | null;
  /** null: UTC (cron), or an every schedule. */
  readonly tz: string | null;
  /** JSON text of every job's payload (shown as stored: never evaluated). */
  readonly payload: string;
  readonly startAt: Date | null;
  readonly endAt: Date | null;
  readonly limit: number | null;
  readonly missed: MissedTicks;
  readonly paused: boolean;
  /** The next tick to fire; null while paused or once over (past endAt, or limit reached). */
  readonly nextRunAt: Date | null;
  /** Jobs fired in all. */
  readonly runs: number;
  readonly lastTickAt: Date | null;
  readonly lastJobId: number | null;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

/** The schedule's rule fields as tickRuleOf takes them. */
export function ruleFieldsOf(row: ScheduleRow) {
  return {
    cron: row.cron,
    everyMs: row.every_ms === null ? null : Number(row.every_ms),
    tz: row.tz,
    startAt: row.start_at,
    createdAt: row.created_at,
  };
}

export function scheduleOf(row: ScheduleRow): Schedule {
  return {
    key: row.schedule_key,
    job: row.job_name,
    queue: row.queue,
    cron: row.cron,
    every: row.every_ms === null ? null : Number(row.every_ms),
    tz: row.tz,
    payload: row.payload,
    startAt: row.start_at,
    endAt: row.end_at,
    limit: row.run_limit,
    missed: (['skip', 'once', 'all'].includes(row.missed) ? row.missed : 'skip') as MissedTicks,
    paused: Boolean(row.paused),
    nextRunAt: row.next_run_at,
    runs: Number(row.runs),
    lastTickAt: row.last_tick_at,
    lastJobId: row.last_job_id === null ? null : Number(row.last_job_id),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}
