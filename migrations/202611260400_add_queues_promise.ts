import type { Knex } from 'knex';
import type { Tables } from '../src/db/tables.ts';

/**
 * A queue's latency promise, set per install at run time (`sluice.queues.setPromise`, `sluice queue
 * promise`): a ready job starts within promise_start_within_ms (the oldest ready job's wait), and
 * no more than promise_max_ready jobs are ready; NULL means no such promise. promise_broken_at is
 * the promise's state as the maintenance leader last judged it (NULL: kept), so that a broken
 * promise is reported once, also across a change of leader. Written only when the promise is set
 * or its state changes, never by a claim. Re-runnable: one ALTER adds the three columns together,
 * and is skipped when they are there.
 */
export async function up(knex: Knex, t: Tables): Promise<void> {
  const [rows] = (await knex.raw(
    `SELECT 1 FROM information_schema.columns
     WHERE table_schema = DATABASE() AND table_name = ? AND column_name = 'promise_broken_at'`,
    [`${t.prefix}queues`],
  )) as [unknown[]];
  if (rows.length > 0) return;
  await knex.raw(`
ALTER TABLE ${t.queues}
  ADD COLUMN promise_start_within_ms INT UNSIGNED NULL,
  ADD COLUMN promise_max_ready INT UNSIGNED NULL,
  ADD COLUMN promise_broken_at DATETIME(3) NULL`);
}

export async function down(knex: Knex, t: Tables): Promise<void> {
  await knex.raw(`
ALTER TABLE ${t.queues}
  DROP COLUMN promise_start_within_ms,
  DROP COLUMN promise_max_ready,
  DROP COLUMN promise_broken_at`);
}
