import type { Knex } from 'knex';
import type { Tables } from '../src/db/tables.ts';

/**
 * The doorbells: for each queue, the workers that can be woken at once, and how. A worker holds a
 * connection of its own that runs nothing but `SELECT SLEEP(…)`; its row names that connection
 * (`connection_id`, from CONNECTION_ID() on that very connection) and the server it is on
 * (`server`, `@@hostname:@@port`), one row per queue it claims from. An enqueuer reads the rows of
 * its queues by primary key after its commit and sends `KILL QUERY <connection_id>` — only over a
 * connection to the same server — which ends the sleep: the worker claims at once. Enqueuers only
 * read this table (no hot row on the enqueue path); a worker writes its own rows when it starts
 * (or reconnects) and deletes them when it stops.
 */
export async function up(knex: Knex, t: Tables): Promise<void> {
  await knex.raw(`
CREATE TABLE IF NOT EXISTS ${t.doorbells} (
  queue          VARCHAR(64)     NOT NULL,
  worker_id      VARCHAR(128)    NOT NULL,
  server         VARCHAR(255)    NOT NULL,
  connection_id  BIGINT UNSIGNED NOT NULL,
  created_at     DATETIME(3)     NOT NULL,
  PRIMARY KEY (queue, worker_id),
  KEY ix_worker (worker_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`);
}

export async function down(knex: Knex, t: Tables): Promise<void> {
  await knex.raw(`DROP TABLE IF EXISTS ${t.doorbells}`);
}
