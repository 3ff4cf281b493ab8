import type { Knex } from 'knex';
import type { Tables } from '../src/db/tables.ts';

/**
 * Run-time schedules (src/scheduler/): one row per schedule key, created, changed and removed by
 * `sluice.schedules.upsert/remove/pause/resume`. next_run_at is the next tick to fire, NULL while
 * paused or once the schedule is over (past endAt or its limit); ix_due holds the due ones in
 * order, so the maintenance pass reads only what is due: `WHERE next_run_at <= NOW(3) ORDER BY
 * next_run_at LIMIT ?`, never the whole table. revision changes with every upsert, pause and
 * resume: a fire is fenced by (schedule_key, revision, next_run_at).
 *
 * schedule_runs: the latest jobs a schedule fired, by run number (seq = runs after that fire);
 * ux_tick makes a tick fire at most once whatever a later upsert does to next_run_at. Older runs
 * are deleted by the fire itself, by run number: no pass walks the table.
 * Re-runnable: CREATE TABLE IF NOT EXISTS.
 */
export async function up(knex: Knex, t: Tables): Promise<void> {
  await knex.raw(`
CREATE TABLE IF NOT EXISTS ${t.schedules} (
  schedule_key VARCHAR(191)     NOT NULL,
  job_name     VARCHAR(128)     NOT NULL,
  queue        VARCHAR(64)      NOT NULL,
  cron         VARCHAR(128)     NULL,
  every_ms     BIGINT UNSIGNED  NULL,
  tz           VARCHAR(64)      NULL,
  payload      MEDIUMTEXT       NOT NULL,
  start_at     DATETIME(3)      NULL,
  end_at       DATETIME(3)      NULL,
  run_limit    INT UNSIGNED     NULL,
  missed       VARCHAR(8)       NOT NULL DEFAULT 'skip',
  paused       BOOLEAN          NOT NULL DEFAULT FALSE,
  next_run_at  DATETIME(3)      NULL,
  runs         INT UNSIGNED     NOT NULL DEFAULT 0,
  last_tick_at DATETIME(3)      NULL,
  last_job_id  BIGINT UNSIGNED  NULL,
  revision     INT UNSIGNED     NOT NULL DEFAULT 1,
  created_at   DATETIME(3)      NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  updated_at   DATETIME(3)      NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  PRIMARY KEY (schedule_key),
  KEY ix_due (next_run_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`);
  await knex.raw(`
CREATE TABLE IF NOT EXISTS ${t.scheduleRuns} (
  schedule_key VARCHAR(191)     NOT NULL,
  seq          INT UNSIGNED     NOT NULL,
  tick_at      DATETIME(3)      NOT NULL,
  job_id       BIGINT UNSIGNED  NULL,
  queue        VARCHAR(64)      NOT NULL,
  fired_at     DATETIME(3)      NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  PRIMARY KEY (schedule_key, seq),
  UNIQUE KEY ux_tick (schedule_key, tick_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`);
}

export async function down(knex: Knex, t: Tables): Promise<void> {
  await knex.raw(`DROP TABLE IF EXISTS ${t.scheduleRuns}, ${t.schedules}`);
}
