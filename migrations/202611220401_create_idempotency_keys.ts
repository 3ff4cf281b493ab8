import type { Knex } from 'knex';
import type { Tables } from '../src/db/tables.ts';

/**
 * One row per (queue, idempotency key) accepted: the primary key is the arbiter, so concurrent
 * enqueues of one key produce one job. expires_at is NULL while the job is live and set to
 * finish + retention when it finishes; expired rows are pruned and their keys free again.
 * `owner` names the enqueue call that inserted the row (so it can tell its keys from others').
 */
export async function up(knex: Knex, t: Tables): Promise<void> {
  await knex.raw(`
CREATE TABLE IF NOT EXISTS ${t.idempotencyKeys} (
  queue            VARCHAR(64)     NOT NULL,
  idempotency_key  VARCHAR(191)    NOT NULL,
  job_id           BIGINT UNSIGNED NULL,
  owner            CHAR(24)        NOT NULL,
  expires_at       DATETIME(3)     NULL,
  created_at       DATETIME(3)     NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  PRIMARY KEY (queue, idempotency_key),
  KEY ix_owner (owner),
  KEY ix_job (job_id),
  KEY ix_expires (expires_at, job_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`);
}

export async function down(knex: Knex, t: Tables): Promise<void> {
  await knex.raw(`DROP TABLE IF EXISTS ${t.idempotencyKeys}`);
}
