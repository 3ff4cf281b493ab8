import type { Knex } from 'knex';
import type { Tables } from '../src/db/tables.ts';

/**
 * Finished jobs, kept for a retention window (pruned in small batches by the sweeper): one row
 * per completed job, keyed by the job's id. No AUTO_INCREMENT: concurrent INSERT … SELECT into an
 * auto-increment table serialises on its table-level AUTO-INC lock, and MariaDB reports the
 * resulting deadlocks as 1467 "Failed to read auto-increment value". Dead jobs stay in dead_jobs.
 */
export async function up(knex: Knex, t: Tables): Promise<void> {
  await knex.raw(`
CREATE TABLE IF NOT EXISTS ${t.jobHistory} (
  job_id         BIGINT UNSIGNED NOT NULL,
  queue          VARCHAR(64)     NOT NULL,
  name           VARCHAR(128)    NOT NULL,
  payload        MEDIUMTEXT      NOT NULL,
  retry_times    INT UNSIGNED    NOT NULL,
  batch_id       BIGINT UNSIGNED NULL,
  created_at     DATETIME(3)     NOT NULL,
  finished_at    DATETIME(3)     NOT NULL,
  PRIMARY KEY (job_id),
  KEY ix_finished (finished_at),
  KEY ix_queue_finished (queue, finished_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`);
}

export async function down(knex: Knex, t: Tables): Promise<void> {
  await knex.raw(`DROP TABLE IF EXISTS ${t.jobHistory}`);
}
