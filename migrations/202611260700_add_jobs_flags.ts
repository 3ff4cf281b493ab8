import type { Knex } from 'knex';
import type { Tables } from '../src/db/tables.ts';

/**
 * jobs.flags: bits a completion must know about, read with the claimed row (src/model/jobFlags.ts):
 * bit 1 = the job has dependents (rows of job_edges name it as parent), bit 2 = it has parents.
 * A completion touches job_edges only for a row with a bit set, so a job outside any graph pays
 * nothing. Later bits are free for concurrency keys.
 *
 * Added at the end of the row with a constant default: an instant ADD COLUMN on MariaDB 10.3+ and
 * MySQL 8.0.12+ (no table copy, metadata only); older servers rebuild the table. Re-runnable: the
 * column is looked up first.
 */
export async function up(knex: Knex, t: Tables): Promise<void> {
  const [rows] = (await knex.raw(
    `SELECT 1 FROM information_schema.columns
     WHERE table_schema = DATABASE() AND table_name = ? AND column_name = 'flags'`,
    [`${t.prefix}jobs`],
  )) as [unknown[]];
  if (rows.length > 0) return;
  await knex.raw(`ALTER TABLE ${t.jobs} ADD COLUMN flags TINYINT UNSIGNED NOT NULL DEFAULT 0`);
}

export async function down(knex: Knex, t: Tables): Promise<void> {
  await knex.raw(`ALTER TABLE ${t.jobs} DROP COLUMN flags`);
}
