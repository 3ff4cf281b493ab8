import type { Knex } from 'knex';
import type { Tables } from '../src/db/tables.ts';

/**
 * A version on each lease row, incremented by every take-over and renewal. A contender takes the
 * lease over once (holder, version) has not changed for the lease's length measured on its own
 * monotonic clock, rather than once expires_at — written by NOW(3) on the holder's server — is
 * past NOW(3) on its own (on a Galera cluster, another node with another clock). expires_at is
 * still written, for maintenance processes of earlier versions and for people reading the row.
 * Re-runnable: the column is looked up first.
 */
export async function up(knex: Knex, t: Tables): Promise<void> {
  const [rows] = (await knex.raw(
    `SELECT 1 FROM information_schema.columns
     WHERE table_schema = DATABASE() AND table_name = ? AND column_name = 'version'`,
    [`${t.prefix}leases`],
  )) as [unknown[]];
  if (rows.length > 0) return;
  await knex.raw(`ALTER TABLE ${t.leases} ADD COLUMN version BIGINT UNSIGNED NOT NULL DEFAULT 0 AFTER holder`);
}

export async function down(knex: Knex, t: Tables): Promise<void> {
  await knex.raw(`ALTER TABLE ${t.leases} DROP COLUMN version`);
}
