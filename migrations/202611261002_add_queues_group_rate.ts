import type { Knex } from 'knex';
import type { Tables } from '../src/db/tables.ts';

/**
 * A queue's default rate for each of its groups (`queues.setLimits(q, { groupRate })`): a group of
 * the queue with no rate of its own starts at most group_rate_limit jobs per group_rate_interval_ms
 * (NULL: none). Read at enqueue by jobs that name a group only.
 * Online: two nullable columns at the end of a small table (instant). Re-runnable: skipped when there.
 */
export async function up(knex: Knex, t: Tables): Promise<void> {
  const [rows] = (await knex.raw(
    `SELECT 1 FROM information_schema.columns
     WHERE table_schema = DATABASE() AND table_name = ? AND column_name = 'group_rate_limit'`,
    [`${t.prefix}queues`],
  )) as [unknown[]];
  if (rows.length > 0) return;
  await knex.raw(`
ALTER TABLE ${t.queues}
  ADD COLUMN group_rate_limit INT UNSIGNED NULL,
  ADD COLUMN group_rate_interval_ms INT UNSIGNED NULL`);
}

export async function down(knex: Knex, t: Tables): Promise<void> {
  await knex.raw(`
ALTER TABLE ${t.queues}
  DROP COLUMN group_rate_limit,
  DROP COLUMN group_rate_interval_ms`);
}
