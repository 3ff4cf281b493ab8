import type { Knex } from 'knex';
import type { Tables } from '../src/db/tables.ts';

/**
 * A queue's defaults for the groups of its jobs (`sluice.queues.setLimits`, `sluice queue limit`):
 * - group_concurrency: every group of the queue runs at most this many of its jobs at once, unless
 *   the group's own row (job_groups.concurrency_limit) says otherwise (NULL: no default).
 * - fair_window: the queue is fair (NULL: not fair): a group with no concurrency limit of its own
 *   keeps at most this many jobs live and unheld; the rest wait in job_holds and join the queue one
 *   per finished job of their group, behind what other groups enqueued meanwhile.
 * Read only by an enqueue of a job that names a group, and by the release of a group's slot: a claim
 * never reads them. Online: nullable columns at the end (instant on MariaDB 10.3+ and MySQL
 * 8.0.12+). Re-runnable: skipped when the columns are there.
 */
export async function up(knex: Knex, t: Tables): Promise<void> {
  const [rows] = (await knex.raw(
    `SELECT 1 FROM information_schema.columns
     WHERE table_schema = DATABASE() AND table_name = ? AND column_name = 'fair_window'`,
    [`${t.prefix}queues`],
  )) as [unknown[]];
  if (rows.length > 0) return;
  await knex.raw(`
ALTER TABLE ${t.queues}
  ADD COLUMN group_concurrency INT UNSIGNED NULL,
  ADD COLUMN fair_window INT UNSIGNED NULL`);
}

export async function down(knex: Knex, t: Tables): Promise<void> {
  await knex.raw(`
ALTER TABLE ${t.queues}
  DROP COLUMN group_concurrency,
  DROP COLUMN fair_window`);
}
