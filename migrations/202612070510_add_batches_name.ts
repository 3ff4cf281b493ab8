import type { Knex } from 'knex';
import type { Tables } from '../src/db/tables.ts';

/**
 * batches.name: what a batch is, as its enqueuer named it (`enqueueBatch(jobs, { name })`; a
 * schedule fire's batches are named `schedules`), shown by `sluice.batches` and the dashboard.
 * Nullable, added at the end of the row: an instant ADD COLUMN on MariaDB 10.3+ and MySQL
 * 8.0.12+. Re-runnable: the column is looked up first.
 */
export async function up(knex: Knex, t: Tables): Promise<void> {
  const [rows] = (await knex.raw(
    `SELECT 1 FROM information_schema.columns
     WHERE table_schema = DATABASE() AND table_name = ? AND column_name = 'name'`,
    [`${t.prefix}batches`],
  )) as [unknown[]];
  if (rows.length > 0) return;
  await knex.raw(`ALTER TABLE ${t.batches} ADD COLUMN name VARCHAR(191) NULL DEFAULT NULL`);
}

export async function down(knex: Knex, t: Tables): Promise<void> {
  await knex.raw(`ALTER TABLE ${t.batches} DROP COLUMN name`);
}
