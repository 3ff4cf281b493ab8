import type { Knex } from 'knex';
import type { Tables } from '../src/db/tables.ts';

/**
 * A rated group's starts, counted at claim (src/worker/claims/countGroupStarts.ts): the enqueue's
 * reservation spreads a group's jobs over windows, and the claim of a job flagged groupRated counts
 * its start in the group's current window, so that jobs that fell due together (a fleet that fell
 * behind, or came up after the enqueue) still start at most `limit` per window.
 * - start_window_ms: the window the count is of (epoch ms on the DB clock, aligned to the interval;
 *   NULL: none counted yet); starts: the starts counted in it.
 * Online: ADD COLUMN of nullable or defaulted columns at the end of a small table (instant on
 * MariaDB 10.3+ and MySQL 8.0.12+). Re-runnable: skipped when the columns are there.
 */
export async function up(knex: Knex, t: Tables): Promise<void> {
  const [rows] = (await knex.raw(
    `SELECT 1 FROM information_schema.columns
     WHERE table_schema = DATABASE() AND table_name = ? AND column_name = 'start_window_ms'`,
    [`${t.prefix}job_groups`],
  )) as [unknown[]];
  if (rows.length > 0) return;
  await knex.raw(`
ALTER TABLE ${t.jobGroups}
  ADD COLUMN start_window_ms BIGINT NULL,
  ADD COLUMN starts INT UNSIGNED NOT NULL DEFAULT 0`);
}

export async function down(knex: Knex, t: Tables): Promise<void> {
  await knex.raw(`
ALTER TABLE ${t.jobGroups}
  DROP COLUMN start_window_ms,
  DROP COLUMN starts`);
}
