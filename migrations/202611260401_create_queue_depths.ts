import type { Knex } from 'knex';
import type { Tables } from '../src/db/tables.ts';

/**
 * Each queue's depth as the maintenance leader last read it (bounded index reads, once per pass):
 * what the metrics scrape serves, in one statement whatever the number of queues or jobs. One row
 * per queue the last pass read; a count that stopped at its cap is marked not exact. Rewritten by
 * one statement per pass, and rows of queues that are gone are deleted by the next. A table of its
 * own rather than columns of `queues`, whose row every claim reads for the pause.
 */
export async function up(knex: Knex, t: Tables): Promise<void> {
  await knex.raw(`
CREATE TABLE IF NOT EXISTS ${t.queueDepths} (
  queue            VARCHAR(64)     NOT NULL,
  ready            INT UNSIGNED    NOT NULL,
  ready_exact      BOOLEAN         NOT NULL,
  not_due          INT UNSIGNED    NOT NULL,
  not_due_exact    BOOLEAN         NOT NULL,
  running          INT UNSIGNED    NOT NULL,
  running_exact    BOOLEAN         NOT NULL,
  dead             INT UNSIGNED    NOT NULL,
  dead_exact       BOOLEAN         NOT NULL,
  oldest_ready_ms  BIGINT UNSIGNED NULL,
  read_at          DATETIME(3)     NOT NULL,
  PRIMARY KEY (queue)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`);
}

export async function down(knex: Knex, t: Tables): Promise<void> {
  await knex.raw(`DROP TABLE IF EXISTS ${t.queueDepths}`);
}
