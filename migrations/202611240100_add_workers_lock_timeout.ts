import type { Knex } from 'knex';
import type { Tables } from '../src/db/tables.ts';

/**
 * Each worker registers the lock timeout it heartbeats against. The sweeper judges a live
 * worker's claims by that value rather than its own, so a sweeper started with a shorter lock
 * timeout than the workers' can no longer take back claims their heartbeats keep fresh. NULL for
 * workers of earlier versions: the sweeper's own timeout applies to them. Re-runnable: MySQL 8
 * has no ADD COLUMN IF NOT EXISTS, so the column is looked up first.
 */
export async function up(knex: Knex, t: Tables): Promise<void> {
  const [rows] = (await knex.raw(
    `SELECT 1 FROM information_schema.columns
     WHERE table_schema = DATABASE() AND table_name = ? AND column_name = 'lock_timeout_ms'`,
    [`${t.prefix}workers`],
  )) as [unknown[]];
  if (rows.length > 0) return;
  await knex.raw(`ALTER TABLE ${t.workers} ADD COLUMN lock_timeout_ms INT UNSIGNED NULL AFTER heartbeat_interval_ms`);
}

export async function down(knex: Knex, t: Tables): Promise<void> {
  await knex.raw(`ALTER TABLE ${t.workers} DROP COLUMN lock_timeout_ms`);
}
