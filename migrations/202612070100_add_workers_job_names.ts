import type { Knex } from 'knex';
import type { Tables } from '../src/db/tables.ts';

/**
 * What a worker can run and what it could not (src/worker/workerRegistry.ts), so that `sluice
 * stats`, the dashboard and the metrics can say "no running worker knows job X":
 * - job_names: the job names the worker has handlers for (JSON array), written when it registers;
 * - unknown_jobs: the job names it claimed, had no handler for and gave back (JSON array of
 *   { name, queue, givenBack }, at most 100 names), carried by its heartbeat.
 * NULL for workers of earlier versions (they fail such jobs instead). Online: ADD COLUMN of
 * nullable columns at the end of a small table. Re-runnable: skipped when the columns are there.
 */
export async function up(knex: Knex, t: Tables): Promise<void> {
  const [rows] = (await knex.raw(
    `SELECT 1 FROM information_schema.columns
     WHERE table_schema = DATABASE() AND table_name = ? AND column_name = 'job_names'`,
    [`${t.prefix}workers`],
  )) as [unknown[]];
  if (rows.length > 0) return;
  await knex.raw(`
ALTER TABLE ${t.workers}
  ADD COLUMN job_names MEDIUMTEXT NULL,
  ADD COLUMN unknown_jobs TEXT NULL`);
}

export async function down(knex: Knex, t: Tables): Promise<void> {
  await knex.raw(`
ALTER TABLE ${t.workers}
  DROP COLUMN job_names,
  DROP COLUMN unknown_jobs`);
}
