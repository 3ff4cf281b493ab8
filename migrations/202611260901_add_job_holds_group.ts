import type { Knex } from 'knex';
import type { Tables } from '../src/db/tables.ts';

/**
 * Per-group concurrency: a job whose group is at its limit is held as a workflow child is (a live
 * jobs row at HELD_RUN_AT, out of the claim's range) with a job_holds row of reason 'group'. The
 * release of a freed slot must find the group's next held job in priority, run_at, id order without
 * reading the jobs table, so the hold carries what that order needs:
 * - queue, group_key: the job's group (NULL for a hold of reason 'parents');
 * - priority: the job's priority (run_at, the intended time, is there already);
 * - ix_group (queue, group_key, priority, run_at, job_id): the group's next held jobs are the first
 *   entries of its range: one bounded index read per release, however many are held behind it.
 * Online: nullable columns at the end (instant on MariaDB 10.3+ and MySQL 8.0.12+) and an index
 * added in place without blocking writes; job_holds holds only jobs waiting, never the backlog at
 * large. Re-runnable: the column and the index are looked up first.
 */
export async function up(knex: Knex, t: Tables): Promise<void> {
  const [columns] = (await knex.raw(
    `SELECT 1 FROM information_schema.columns
     WHERE table_schema = DATABASE() AND table_name = ? AND column_name = 'group_key'`,
    [`${t.prefix}job_holds`],
  )) as [unknown[]];
  if (columns.length === 0) {
    await knex.raw(`
ALTER TABLE ${t.jobHolds}
  ADD COLUMN queue VARCHAR(64) NULL,
  ADD COLUMN group_key VARCHAR(191) NULL,
  ADD COLUMN priority SMALLINT NULL`);
  }
  const [indexes] = (await knex.raw(
    `SELECT 1 FROM information_schema.statistics
     WHERE table_schema = DATABASE() AND table_name = ? AND index_name = 'ix_group'`,
    [`${t.prefix}job_holds`],
  )) as [unknown[]];
  if (indexes.length === 0)
    await knex.raw(`ALTER TABLE ${t.jobHolds} ADD KEY ix_group (queue, group_key, priority, run_at, job_id)`);
}

export async function down(knex: Knex, t: Tables): Promise<void> {
  await knex.raw(`
ALTER TABLE ${t.jobHolds}
  DROP KEY ix_group,
  DROP COLUMN queue,
  DROP COLUMN group_key,
  DROP COLUMN priority`);
}
