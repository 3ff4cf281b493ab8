import type { Knex } from 'knex';
import type { Tables } from '../src/db/tables.ts';

/** claimed_at of a job no worker has claimed: the same no-claim time as locked_at's. */
const NO_CLAIM = '1970-01-01 00:00:01.000';

/**
 * jobs.claimed_at: when the claim that holds a job was taken, on the DB clock. locked_at is moved
 * on by every heartbeat (the lock timeout counts from the last extension), so it cannot say when a
 * run started; the history's started_at and the run times charted from it were the last beat.
 * The claims write both with the same NOW(3); nothing else writes claimed_at.
 *
 * Never NULL, like locked_at (202611230300): a claim updates the row in place. Added at the end of
 * the row with a constant default: an instant ADD COLUMN on MariaDB 10.3+ and MySQL 8.0.12+.
 * During a rolling upgrade a worker of the previous version claims without writing it: the
 * history then keeps that claim's locked_at, as before (historyColumns.ts). Re-runnable: the
 * column is looked up first.
 */
export async function up(knex: Knex, t: Tables): Promise<void> {
  const [rows] = (await knex.raw(
    `SELECT 1 FROM information_schema.columns
     WHERE table_schema = DATABASE() AND table_name = ? AND column_name = 'claimed_at'`,
    [`${t.prefix}jobs`],
  )) as [unknown[]];
  if (rows.length > 0) return;
  await knex.raw(`ALTER TABLE ${t.jobs} ADD COLUMN claimed_at DATETIME(3) NOT NULL DEFAULT '${NO_CLAIM}'`);
}

export async function down(knex: Knex, t: Tables): Promise<void> {
  await knex.raw(`ALTER TABLE ${t.jobs} DROP COLUMN claimed_at`);
}
