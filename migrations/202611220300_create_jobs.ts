import type { Knex } from 'knex';
import type { Tables } from '../src/db/tables.ts';

/**
 * The live queue: a row exists only while its job waits, runs or awaits a retry.
 * - ix_head serves the claim's head scan (queue, free, ORDER BY priority, run_at, id) with no filesort;
 *   InnoDB appends the primary key, so `id` orders ties.
 * - ix_locked_at serves the sweeper (claims older than the lock timeout); free rows hold NULL.
 * - backoff: the job's own retry backoff as JSON ({"type":"fixed"|"exponential",…}); NULL = the definition's.
 * - max_retries NULL means "as the job's definition says" (the worker knows definitions; the enqueuer need not).
 * - ix_batch serves batch look-ups; ux_idempotency makes a (queue, key) pair unique (NULL keys repeat).
 */
export async function up(knex: Knex, t: Tables): Promise<void> {
  await knex.raw(`
CREATE TABLE IF NOT EXISTS ${t.jobs} (
  id              BIGINT UNSIGNED   NOT NULL AUTO_INCREMENT,
  queue           VARCHAR(64)       NOT NULL,
  name            VARCHAR(128)      NOT NULL,
  payload         MEDIUMTEXT        NOT NULL,
  priority        SMALLINT          NOT NULL DEFAULT 0,
  run_at          DATETIME(3)       NOT NULL,
  lock_id         VARCHAR(128)      NOT NULL DEFAULT '',
  locked_at       DATETIME(3)       NULL,
  retry_times     INT UNSIGNED      NOT NULL DEFAULT 0,
  max_retries     INT UNSIGNED      NULL,
  backoff         VARCHAR(255)      NULL,
  batch_id        BIGINT UNSIGNED   NULL,
  idempotency_key VARCHAR(191)      NULL,
  last_error      TEXT              NULL,
  created_at      DATETIME(3)       NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  updated_at      DATETIME(3)       NOT NULL DEFAULT CURRENT_TIMESTAMP(3) ON UPDATE CURRENT_TIMESTAMP(3),
  PRIMARY KEY (id),
  KEY ix_head (queue, lock_id, priority, run_at),
  KEY ix_locked_at (locked_at),
  KEY ix_batch (batch_id),
  UNIQUE KEY ux_idempotency (queue, idempotency_key)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`);
}

export async function down(knex: Knex, t: Tables): Promise<void> {
  await knex.raw(`DROP TABLE IF EXISTS ${t.jobs}`);
}
