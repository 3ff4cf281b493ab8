import type { Knex } from 'knex';
import type { Tables } from '../src/db/tables.ts';

/**
 * Finished jobs, kept for a retention window (pruned in small batches by the sweeper).
 * One row per successful completion; dead jobs stay in dead_jobs.
 */
export async function up(knex: Knex, t: Tables): Promise<void> {
  await knex.raw(`
CREATE TABLE IF NOT EXISTS ${t.jobHistory} (
  id             BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
  job_id         BIGINT UNSIGNED NOT NULL,
  queue          VARCHAR(64)     NOT NULL,
  name           VARCHAR(128)    NOT NULL,
  payload        MEDIUMTEXT      NOT NULL,
  retry_times    INT UNSIGNED    NOT NULL,
  batch_id       BIGINT UNSIGNED NULL,
  created_at     DATETIME(3)     NOT NULL,
  finished_at    DATETIME(3)     NOT NULL,
  PRIMARY KEY (id),
  KEY ix_finished (finished_at),
  KEY ix_queue_finished (queue, finished_at),
  KEY ix_job (job_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`);
}

export async function down(knex: Knex, t: Tables): Promise<void> {
  await knex.raw(`DROP TABLE IF EXISTS ${t.jobHistory}`);
}
