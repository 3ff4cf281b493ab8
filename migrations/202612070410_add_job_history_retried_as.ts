import type { Knex } from 'knex';
import type { Tables } from '../src/db/tables.ts';

/**
 * job_history.retried_as: a finished job (completed or cancelled) that an operator retried points
 * at the new live job that re-runs it, as dead_jobs.redriven_as does for a re-driven dead job; NULL
 * until then. One retry per row: the retry writes it in the same transaction as the new job, only
 * where it is still NULL.
 *
 * Added at the end of the row with a NULL default: an instant ADD COLUMN on MariaDB 10.3+ and
 * MySQL 8.0.12+ (metadata only, whatever the size of the history). No index: it is read with its
 * row by primary key. Re-runnable: the column is looked up first.
 */
export async function up(knex: Knex, t: Tables): Promise<void> {
  const [rows] = (await knex.raw(
    `SELECT 1 FROM information_schema.columns
     WHERE table_schema = DATABASE() AND table_name = ? AND column_name = 'retried_as'`,
    [`${t.prefix}job_history`],
  )) as [unknown[]];
  if (rows.length > 0) return;
  await knex.raw(`ALTER TABLE ${t.jobHistory} ADD COLUMN retried_as BIGINT UNSIGNED NULL DEFAULT NULL`);
}

export async function down(knex: Knex, t: Tables): Promise<void> {
  await knex.raw(`ALTER TABLE ${t.jobHistory} DROP COLUMN retried_as`);
}
