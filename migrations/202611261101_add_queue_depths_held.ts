import type { Knex } from 'knex';
import type { Tables } from '../src/db/tables.ts';

/**
 * queue_depths.held / held_exact: the jobs each queue holds back (a workflow's jobs waiting for
 * their parents, jobs held by a limit: run_at = HELD_RUN_AT), recorded apart from the not-yet-due
 * ones, so the metrics and the recorded depth show them as held rather than delayed. Readings
 * taken before this migration read 0, exact, until the next maintenance pass rewrites them.
 *
 * Added at the end of the row with constant defaults: an instant ADD COLUMN on MariaDB 10.3+ and
 * MySQL 8.0.12+ (metadata only; a table of one row per queue in any case). Re-runnable: the column
 * is looked up first.
 */
export async function up(knex: Knex, t: Tables): Promise<void> {
  const [rows] = (await knex.raw(
    `SELECT 1 FROM information_schema.columns
     WHERE table_schema = DATABASE() AND table_name = ? AND column_name = 'held'`,
    [`${t.prefix}queue_depths`],
  )) as [unknown[]];
  if (rows.length > 0) return;
  await knex.raw(
    `ALTER TABLE ${t.queueDepths}
     ADD COLUMN held INT UNSIGNED NOT NULL DEFAULT 0,
     ADD COLUMN held_exact BOOLEAN NOT NULL DEFAULT TRUE`,
  );
}

export async function down(knex: Knex, t: Tables): Promise<void> {
  await knex.raw(`ALTER TABLE ${t.queueDepths} DROP COLUMN held, DROP COLUMN held_exact`);
}
