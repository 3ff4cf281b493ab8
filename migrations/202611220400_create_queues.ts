import type { Knex } from 'knex';
import type { Tables } from '../src/db/tables.ts';

/** Per-queue switches. A row exists only for queues someone paused (or resumed). */
export async function up(knex: Knex, t: Tables): Promise<void> {
  await knex.raw(`
CREATE TABLE IF NOT EXISTS ${t.queues} (
  queue       VARCHAR(64) NOT NULL,
  paused_at   DATETIME(3) NULL,
  updated_at  DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  PRIMARY KEY (queue)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`);
}

export async function down(knex: Knex, t: Tables): Promise<void> {
  await knex.raw(`DROP TABLE IF EXISTS ${t.queues}`);
}
