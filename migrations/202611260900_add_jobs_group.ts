import type { Knex } from 'knex';
import type { Tables } from '../src/db/tables.ts';

/**
 * Groups: the key a job's flow control counts by (an account, a tenant, an API). Jobs of one group
 * of a queue share that group's limits — how many run at once, how many start per interval — and a
 * fair queue takes turns between groups.
 * - jobs.group_key: the job's group (NULL: none; such a job pays nothing for any of this). Added at
 *   the end of the row, nullable and without an index: an instant ADD COLUMN on MariaDB 10.3+ and
 *   MySQL 8.0.12+ (metadata only, no table copy).
 * - job_groups: one row per (queue, group) that has a limit or jobs to count, created on first use.
 *   Only jobs of a group touch it, so a queue without groups never reads or writes it, and a row is
 *   contended only by jobs of the same group (on Galera: conflicts only within one group).
 *   concurrency_limit (NULL: none) and active (the group's jobs that hold a slot) belong to the
 *   per-group concurrency limit; later migrations add what the rate limits need.
 * Re-runnable: the column is looked up first, the table is created if missing.
 */
export async function up(knex: Knex, t: Tables): Promise<void> {
  const [rows] = (await knex.raw(
    `SELECT 1 FROM information_schema.columns
     WHERE table_schema = DATABASE() AND table_name = ? AND column_name = 'group_key'`,
    [`${t.prefix}jobs`],
  )) as [unknown[]];
  if (rows.length === 0) await knex.raw(`ALTER TABLE ${t.jobs} ADD COLUMN group_key VARCHAR(191) NULL`);
  await knex.raw(`
CREATE TABLE IF NOT EXISTS ${t.jobGroups} (
  queue             VARCHAR(64)  NOT NULL,
  group_key         VARCHAR(191) NOT NULL,
  concurrency_limit INT UNSIGNED NULL,
  active            INT UNSIGNED NOT NULL DEFAULT 0,
  updated_at        DATETIME(3)  NOT NULL DEFAULT CURRENT_TIMESTAMP(3) ON UPDATE CURRENT_TIMESTAMP(3),
  PRIMARY KEY (queue, group_key)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`);
}

export async function down(knex: Knex, t: Tables): Promise<void> {
  await knex.raw(`DROP TABLE IF EXISTS ${t.jobGroups}`);
  await knex.raw(`ALTER TABLE ${t.jobs} DROP COLUMN group_key`);
}
