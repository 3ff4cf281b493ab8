import type { Knex } from 'knex';
import type { Tables } from '../src/db/tables.ts';

/**
 * A running job's last reported progress (`ctx.progress(value)`, JSON text), one row per job that
 * ever reported any: jobs that never do cost nothing, and the live jobs table keeps its
 * fixed-width rows (a claim stays an in-place update). Written by the worker's heartbeat, at most
 * once per beat per job and only when the value changed; kept after the job finishes (so
 * `jobs.get` shows where it ended) and pruned by the maintenance pass with the history retention
 * (ix_updated), never while the job is live.
 */
export async function up(knex: Knex, t: Tables): Promise<void> {
  await knex.raw(`
CREATE TABLE IF NOT EXISTS ${t.jobProgress} (
  job_id      BIGINT UNSIGNED NOT NULL,
  progress    TEXT            NOT NULL,
  updated_at  DATETIME(3)     NOT NULL,
  PRIMARY KEY (job_id),
  KEY ix_updated (updated_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`);
}

export async function down(knex: Knex, t: Tables): Promise<void> {
  await knex.raw(`DROP TABLE IF EXISTS ${t.jobProgress}`);
}
