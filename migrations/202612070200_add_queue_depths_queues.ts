import type { Knex } from 'knex';
import type { Tables } from '../src/db/tables.ts';

/**
 * queue_depths.queues / queues_exact: the maintenance pass reads the first queues in name order
 * and every promised queue one by one, and sums the queues past them into one reading named
 * `(others)` (not a queue name); `queues` says how many queues that reading sums (NULL on a queue's
 * own reading), so the metrics show the cut instead of dropping the queues past it.
 *
 * Added at the end of the row with constant defaults: an instant ADD COLUMN on MariaDB 10.3+ and
 * MySQL 8.0.12+ (metadata only; a table of one row per queue in any case). Re-runnable: the column
 * is looked up first.
 */
export async function up(knex: Knex, t: Tables): Promise<void> {
  const [rows] = (await knex.raw(
    `SELECT 1 FROM information_schema.columns
     WHERE table_schema = DATABASE() AND table_name = ? AND column_name = 'queues'`,
    [`${t.prefix}queue_depths`],
  )) as [unknown[]];
  if (rows.length > 0) return;
  await knex.raw(
    `ALTER TABLE ${t.queueDepths}
     ADD COLUMN queues INT UNSIGNED NULL DEFAULT NULL,
     ADD COLUMN queues_exact BOOLEAN NOT NULL DEFAULT TRUE`,
  );
}

export async function down(knex: Knex, t: Tables): Promise<void> {
  await knex.raw(`ALTER TABLE ${t.queueDepths} DROP COLUMN queues, DROP COLUMN queues_exact`);
}
