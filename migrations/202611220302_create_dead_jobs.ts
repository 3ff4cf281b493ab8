import type { Knex } from 'knex';
import type { Tables } from '../src/db/tables.ts';

/**
 * Jobs that exhausted their retries (or failed permanently), kept with their last error; `id` is
 * the job's id. Re-driving keeps the row as history: redriven_at says when, redriven_as names the
 * new live job.
 */
export async function up(knex: Knex, t: Tables): Promise<void> {
  await knex.raw(`
CREATE TABLE IF NOT EXISTS ${t.deadJobs} (
  id              BIGINT UNSIGNED NOT NULL,
  queue           VARCHAR(64)     NOT NULL,
  name            VARCHAR(128)    NOT NULL,
  payload         MEDIUMTEXT      NOT NULL,
  priority        SMALLINT        NOT NULL,
  retry_times     INT UNSIGNED    NOT NULL,
  max_retries     INT UNSIGNED    NULL,
  batch_id        BIGINT UNSIGNED NULL,
  idempotency_key VARCHAR(191)    NULL,
  last_error      TEXT            NULL,
  created_at      DATETIME(3)     NOT NULL,
  failed_at       DATETIME(3)     NOT NULL,
  redriven_at     DATETIME(3)     NULL,
  redriven_as     BIGINT UNSIGNED NULL,
  PRIMARY KEY (id),
  KEY ix_queue_failed (queue, failed_at),
  KEY ix_failed (failed_at),
  KEY ix_redriven (redriven_at, id),
  KEY ix_batch (batch_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`);
}

export async function down(knex: Knex, t: Tables): Promise<void> {
  await knex.raw(`DROP TABLE IF EXISTS ${t.deadJobs}`);
}
