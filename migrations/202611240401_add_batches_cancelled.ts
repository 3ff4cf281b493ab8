import type { Knex } from 'knex';
import type { Tables } from '../src/db/tables.ts';

/**
 * How many of a batch's jobs were cancelled, counted by the cancel itself in the transaction that
 * removes them: job_history has no batch index (every completion would pay for one), and a batch's
 * summary (getBatch, its completion job's payload) must tell cancelled jobs from succeeded ones.
 * Re-runnable: the column is looked up first.
 */
export async function up(knex: Knex, t: Tables): Promise<void> {
  const [rows] = (await knex.raw(
    `SELECT 1 FROM information_schema.columns
     WHERE table_schema = DATABASE() AND table_name = ? AND column_name = 'cancelled'`,
    [`${t.prefix}batches`],
  )) as [unknown[]];
  if (rows.length > 0) return;
  await knex.raw(`ALTER TABLE ${t.batches} ADD COLUMN cancelled INT UNSIGNED NOT NULL DEFAULT 0`);
}

export async function down(knex: Knex, t: Tables): Promise<void> {
  await knex.raw(`ALTER TABLE ${t.batches} DROP COLUMN cancelled`);
}
