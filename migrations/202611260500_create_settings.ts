import type { Knex } from 'knex';
import type { Tables } from '../src/db/tables.ts';

/**
 * The install's own settings, one row each, read by every process of the install (workers,
 * maintenance, the API): today the history and dead-job retentions. A setting with no row keeps
 * its default, so an install upgraded past this migration behaves as before until an operator sets
 * one. `value` is the setting's text (a whole number of milliseconds, or `Infinity`).
 */
export async function up(knex: Knex, t: Tables): Promise<void> {
  await knex.raw(`
CREATE TABLE IF NOT EXISTS ${t.settings} (
  name        VARCHAR(64)  NOT NULL,
  value       VARCHAR(255) NOT NULL,
  updated_at  DATETIME(3)  NOT NULL,
  PRIMARY KEY (name)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`);
}

export async function down(knex: Knex, t: Tables): Promise<void> {
  await knex.raw(`DROP TABLE IF EXISTS ${t.settings}`);
}
