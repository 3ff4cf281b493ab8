import type { Knex } from 'knex';
import type { Tables } from '../src/db/tables.ts';

/**
 * The worker registry: one row per live worker, refreshed by its heartbeat (on the DB clock).
 * The sweeper releases the claims of workers whose heartbeat is older than a few of their own
 * heartbeat intervals, and removes their rows. `counters` holds this worker's per-queue totals
 * (completed, failed, dead) as JSON: per-worker rows, so no counter row is hot.
 */
export async function up(knex: Knex, t: Tables): Promise<void> {
  await knex.raw(`
CREATE TABLE IF NOT EXISTS ${t.workers} (
  id             VARCHAR(128)    NOT NULL,
  host           VARCHAR(64)     NOT NULL,
  pid            INT UNSIGNED    NOT NULL,
  queues         VARCHAR(1024)   NOT NULL,
  started_at     DATETIME(3)     NOT NULL,
  heartbeat_at   DATETIME(3)     NOT NULL,
  heartbeat_interval_ms INT UNSIGNED NOT NULL,
  concurrency    INT UNSIGNED    NOT NULL,
  concurrency_limit INT UNSIGNED NOT NULL,
  in_flight      INT UNSIGNED    NOT NULL DEFAULT 0,
  processed      BIGINT UNSIGNED NOT NULL DEFAULT 0,
  failed         BIGINT UNSIGNED NOT NULL DEFAULT 0,
  cpu            DOUBLE          NULL,
  free_mem       DOUBLE          NULL,
  claim_latency_ms DOUBLE        NULL,
  counters       TEXT            NULL,
  PRIMARY KEY (id),
  KEY ix_heartbeat (heartbeat_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`);
}

export async function down(knex: Knex, t: Tables): Promise<void> {
  await knex.raw(`DROP TABLE IF EXISTS ${t.workers}`);
}
