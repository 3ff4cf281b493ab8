import type { Knex } from 'knex';
import type { Tables } from '../src/db/tables.ts';

/**
 * job_group_members: which live jobs belong to which (queue, group), written at enqueue for jobs that
 * name a group only. Pausing a group (a handler's `RateLimitedError` with `{ pause: 'group' }`) finds
 * the group's waiting jobs here, in bounded batches by primary key, and moves them past the pause.
 * A table of its own rather than an index on jobs: an index on jobs (queue, group_key) would cost
 * every job an index entry, grouped or not (measured: bulk enqueues of ungrouped jobs ran 7–30 %
 * slower with it, on a loaded host); this costs only grouped jobs one row. Rows of jobs that are
 * gone are deleted by the maintenance task pruneDebounces (one page per pass over ix_job).
 * Re-runnable: CREATE TABLE IF NOT EXISTS.
 */
export async function up(knex: Knex, t: Tables): Promise<void> {
  await knex.raw(`
CREATE TABLE IF NOT EXISTS ${t.jobGroupMembers} (
  queue     VARCHAR(64)     NOT NULL,
  group_key VARCHAR(191)    NOT NULL,
  job_id    BIGINT UNSIGNED NOT NULL,
  PRIMARY KEY (queue, group_key, job_id),
  KEY ix_job (job_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`);
}

export async function down(knex: Knex, t: Tables): Promise<void> {
  await knex.raw(`DROP TABLE IF EXISTS ${t.jobGroupMembers}`);
}
