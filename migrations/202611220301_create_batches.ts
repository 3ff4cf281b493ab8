import type { Knex } from 'knex';
import type { Tables } from '../src/db/tables.ts';

/** One row per enqueueBatch call: its size, when it was made, when it finished. */
export async function up(knex: Knex, t: Tables): Promise<void> {
  await knex.raw(`
CREATE TABLE IF NOT EXISTS ${t.batches} (
  id           BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
  size         INT UNSIGNED    NOT NULL,
  created_at   DATETIME(3)     NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  finished_at  DATETIME(3)     NULL,
  on_complete  MEDIUMTEXT      NULL,
  PRIMARY KEY (id),
  KEY ix_unfinished (finished_at, id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`);
}

export async function down(knex: Knex, t: Tables): Promise<void> {
  await knex.raw(`DROP TABLE IF EXISTS ${t.batches}`);
}
