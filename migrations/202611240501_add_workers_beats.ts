import type { Knex } from 'knex';
import type { Tables } from '../src/db/tables.ts';

/**
 * A beat counter on each worker's registry row, incremented by every heartbeat. The maintenance
 * process judges liveness by watching (heartbeat_at, beats) change between two of its own
 * observations, timed on its own monotonic clock — never by comparing heartbeat_at, written by
 * NOW(3) on the worker's server, with NOW(3) on its own (on a Galera cluster, another node with
 * another clock). The counter changes with every beat even if that node's clock stands still or
 * steps back. Workers of earlier versions do not count; their heartbeat_at still changes.
 * Re-runnable: MySQL 8 has no ADD COLUMN IF NOT EXISTS, so the column is looked up first.
 */
export async function up(knex: Knex, t: Tables): Promise<void> {
  const [rows] = (await knex.raw(
    `SELECT 1 FROM information_schema.columns
     WHERE table_schema = DATABASE() AND table_name = ? AND column_name = 'beats'`,
    [`${t.prefix}workers`],
  )) as [unknown[]];
  if (rows.length > 0) return;
  await knex.raw(`ALTER TABLE ${t.workers} ADD COLUMN beats BIGINT UNSIGNED NOT NULL DEFAULT 0 AFTER heartbeat_at`);
}

export async function down(knex: Knex, t: Tables): Promise<void> {
  await knex.raw(`ALTER TABLE ${t.workers} DROP COLUMN beats`);
}
