import type { Knex } from 'knex';
import type { Tables } from '../src/db/tables.ts';

/**
 * A worker's stable name (SLUICE_WORKER_NAME, or its PM2 instance): what metrics label a worker
 * with, so that a restarted worker continues its series instead of starting a new one per
 * process. NULL for workers of earlier versions. Re-runnable: MySQL 8 has no ADD COLUMN IF NOT
 * EXISTS, so the column is looked up first.
 */
export async function up(knex: Knex, t: Tables): Promise<void> {
  const [rows] = (await knex.raw(
    `SELECT 1 FROM information_schema.columns
     WHERE table_schema = DATABASE() AND table_name = ? AND column_name = 'name'`,
    [`${t.prefix}workers`],
  )) as [unknown[]];
  if (rows.length > 0) return;
  await knex.raw(`ALTER TABLE ${t.workers} ADD COLUMN name VARCHAR(64) NULL AFTER host`);
}

export async function down(knex: Knex, t: Tables): Promise<void> {
  await knex.raw(`ALTER TABLE ${t.workers} DROP COLUMN name`);
}
