import type { Knex } from 'knex';
import type { Tables } from '../src/db/tables.ts';

/**
 * The lines a job's handler kept with `ctx.log(message, fields)`: up to `maxLogLines` lines and
 * `maxLogBytes` bytes per attempt, for its latest `keptAttempts` attempts. `line` counts from 1
 * within an attempt; the row with line 0 carries only `dropped`, the lines that attempt logged past
 * its caps. `logged_at` is on the DB clock (the write's NOW(3) less the line's age). Written in
 * batches — with the worker's heartbeat, or with the attempt's completion, retry or dead-letter —
 * never a statement per line, and never for a job that does not log. Rows stay while the job is
 * live and with its history or dead row, and are pruned once the job is in none of them
 * (ix_logged).
 */
export async function up(knex: Knex, t: Tables): Promise<void> {
  await knex.raw(`
CREATE TABLE IF NOT EXISTS ${t.jobLogs} (
  job_id     BIGINT UNSIGNED NOT NULL,
  attempt    INT UNSIGNED    NOT NULL,
  line       INT UNSIGNED    NOT NULL,
  logged_at  DATETIME(3)     NOT NULL,
  message    TEXT            NOT NULL,
  fields     TEXT            NULL,
  dropped    INT UNSIGNED    NOT NULL DEFAULT 0,
  PRIMARY KEY (job_id, attempt, line),
  KEY ix_logged (logged_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`);
}

export async function down(knex: Knex, t: Tables): Promise<void> {
  await knex.raw(`DROP TABLE IF EXISTS ${t.jobLogs}`);
}
