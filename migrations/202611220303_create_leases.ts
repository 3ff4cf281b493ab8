import type { Knex } from 'knex';
import type { Tables } from '../src/db/tables.ts';

/** Leader leases on the DB clock (GET_LOCK is per node on Galera): one row per role. */
export async function up(knex: Knex, t: Tables): Promise<void> {
  await knex.raw(`
CREATE TABLE IF NOT EXISTS ${t.leases} (
  name        VARCHAR(64)  NOT NULL,
  holder      VARCHAR(191) NOT NULL DEFAULT '',
  expires_at  DATETIME(3)  NOT NULL,
  PRIMARY KEY (name)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`);
}

export async function down(knex: Knex, t: Tables): Promise<void> {
  await knex.raw(`DROP TABLE IF EXISTS ${t.leases}`);
}
