import type { Knex } from 'knex';
import type { Tables } from '../src/db/tables.ts';

/**
 * Per-group rate limits, reserved at enqueue (src/queues/reserveGroupStarts.ts): the group's row,
 * locked in the enqueue's transaction, hands each new job of the group the first start window with
 * room, and the job is written with that run_at. Claims never read these columns.
 * - rate_limit, rate_interval_ms: the group's own rate (NULL: the queue's groupRate default, if any).
 * - rate_window_ms: the latest window holding reservations (epoch ms on the DB clock, aligned to the
 *   interval); rate_used: the reservations in it. Reservations only move forward.
 * - paused_until: a handler's rate-limit signal paused the group until then: new jobs reserve from
 *   then on, and the group's waiting jobs were moved past it.
 * Online: ADD COLUMN of nullable or defaulted columns at the end of a small table (instant on
 * MariaDB 10.3+ and MySQL 8.0.12+). Re-runnable: skipped when the columns are there.
 */
export async function up(knex: Knex, t: Tables): Promise<void> {
  const [rows] = (await knex.raw(
    `SELECT 1 FROM information_schema.columns
     WHERE table_schema = DATABASE() AND table_name = ? AND column_name = 'rate_window_ms'`,
    [`${t.prefix}job_groups`],
  )) as [unknown[]];
  if (rows.length > 0) return;
  await knex.raw(`
ALTER TABLE ${t.jobGroups}
  ADD COLUMN rate_limit INT UNSIGNED NULL,
  ADD COLUMN rate_interval_ms INT UNSIGNED NULL,
  ADD COLUMN rate_window_ms BIGINT NULL,
  ADD COLUMN rate_used INT UNSIGNED NOT NULL DEFAULT 0,
  ADD COLUMN paused_until DATETIME(3) NULL`);
}

export async function down(knex: Knex, t: Tables): Promise<void> {
  await knex.raw(`
ALTER TABLE ${t.jobGroups}
  DROP COLUMN rate_limit,
  DROP COLUMN rate_interval_ms,
  DROP COLUMN rate_window_ms,
  DROP COLUMN rate_used,
  DROP COLUMN paused_until`);
}
