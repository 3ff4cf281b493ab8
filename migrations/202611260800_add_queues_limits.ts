import type { Knex } from 'knex';
import type { Tables } from '../src/db/tables.ts';

/**
 * Flow control per queue, set at run time (`sluice.queues.setLimits`, `sluice queue limit`):
 * - concurrency_cap: at most this many of the queue's jobs claimed at once across the fleet (NULL:
 *   no cap). The count is read from jobs itself (the claimed range of ix_head), never stored, so a
 *   crashed worker's slots come back when its claims are released.
 * - rate_limit, rate_interval_ms: at most rate_limit claims per window of rate_interval_ms (NULL:
 *   no rate). rate_window_ms is the window the count rate_used belongs to (epoch ms on the DB clock,
 *   windows aligned to the interval); the first limited claim of a new window resets the count.
 * - limit_claims: bumped by every claim of a limited queue, the write that locks the row (limited
 *   claims of one queue take turns) and on Galera makes two nodes' claims conflict at certification.
 * - paused_until: the queue is paused until then (a handler's rate-limit signal), checked wherever
 *   paused_at is.
 * A queue without limits is never written by a claim. Re-runnable: one ALTER adds the columns
 * together, and is skipped when they are there.
 */
export async function up(knex: Knex, t: Tables): Promise<void> {
  const [rows] = (await knex.raw(
    `SELECT 1 FROM information_schema.columns
     WHERE table_schema = DATABASE() AND table_name = ? AND column_name = 'paused_until'`,
    [`${t.prefix}queues`],
  )) as [unknown[]];
  if (rows.length > 0) return;
  await knex.raw(`
ALTER TABLE ${t.queues}
  ADD COLUMN concurrency_cap INT UNSIGNED NULL,
  ADD COLUMN rate_limit INT UNSIGNED NULL,
  ADD COLUMN rate_interval_ms INT UNSIGNED NULL,
  ADD COLUMN rate_window_ms BIGINT NULL,
  ADD COLUMN rate_used INT UNSIGNED NOT NULL DEFAULT 0,
  ADD COLUMN limit_claims BIGINT UNSIGNED NOT NULL DEFAULT 0,
  ADD COLUMN paused_until DATETIME(3) NULL`);
}

export async function down(knex: Knex, t: Tables): Promise<void> {
  await knex.raw(`
ALTER TABLE ${t.queues}
  DROP COLUMN concurrency_cap,
  DROP COLUMN rate_limit,
  DROP COLUMN rate_interval_ms,
  DROP COLUMN rate_window_ms,
  DROP COLUMN rate_used,
  DROP COLUMN limit_claims,
  DROP COLUMN paused_until`);
}
