import type { Knex } from 'knex';
import type { Tables } from '../src/db/tables.ts';

/**
 * job_graph_history: the dependencies of a workflow's jobs that finished, one row per edge, so a
 * finished workflow's graph can still be drawn (job_edges keeps an edge only while its child is
 * live). Written as a child of a batch leaves the live table with history kept
 * (src/workflows/leaveGraph.ts); jobs outside a graph never write it.
 * - PRIMARY KEY (child_id, parent_id): a finished job's parents (jobs.get).
 * - KEY ix_parent (parent_id): a job's finished children (jobs.get).
 * - KEY ix_batch (batch_id, child_id): a batch's finished edges, a bounded page (the dashboard).
 * - continue_on_failure: as the edge had it.
 * - KEY ix_finished (finished_at): the retention (pruneGraphHistory, the history's retention).
 * A new, empty table: instant. Re-runnable: CREATE TABLE IF NOT EXISTS.
 */
export async function up(knex: Knex, t: Tables): Promise<void> {
  await knex.raw(`
CREATE TABLE IF NOT EXISTS ${t.jobGraphHistory} (
  child_id            BIGINT UNSIGNED NOT NULL,
  parent_id           BIGINT UNSIGNED NOT NULL,
  batch_id            BIGINT UNSIGNED NOT NULL,
  continue_on_failure BOOLEAN         NOT NULL DEFAULT FALSE,
  finished_at         DATETIME(3)     NOT NULL,
  PRIMARY KEY (child_id, parent_id),
  KEY ix_parent (parent_id),
  KEY ix_batch (batch_id, child_id),
  KEY ix_finished (finished_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`);
}

export async function down(knex: Knex, t: Tables): Promise<void> {
  await knex.raw(`DROP TABLE IF EXISTS ${t.jobGraphHistory}`);
}
