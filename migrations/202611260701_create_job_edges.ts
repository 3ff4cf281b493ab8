import type { Knex } from 'knex';
import type { Tables } from '../src/db/tables.ts';

/**
 * One row per dependency of a workflow: the child runs once its parent finished (src/workflows/).
 * - PRIMARY KEY (parent_id, child_id): what a finishing parent reads and writes, its own children.
 * - KEY ix_child (child_id): a child's parents (jobs.get, ctx.parents, the reconciler).
 * - continue_on_failure: the child runs even if this parent dies or is cancelled.
 * - parent_outcome: NULL while the parent is live; 'completed', 'dead' or 'cancelled' once it
 *   finished. A finished parent's edge is kept (not deleted) until its child leaves the live table:
 *   that is how a child knows its parents and which of them failed with history off, where no
 *   other row remembers them. The child's own completion deletes its edges (jobs.flags bit 2: no
 *   cost for jobs outside a graph), as does its cancel or its dead-lettering.
 */
export async function up(knex: Knex, t: Tables): Promise<void> {
  await knex.raw(`
CREATE TABLE IF NOT EXISTS ${t.jobEdges} (
  parent_id           BIGINT UNSIGNED NOT NULL,
  child_id            BIGINT UNSIGNED NOT NULL,
  continue_on_failure BOOLEAN         NOT NULL DEFAULT FALSE,
  parent_outcome      VARCHAR(16)     NULL,
  PRIMARY KEY (parent_id, child_id),
  KEY ix_child (child_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`);
}

export async function down(knex: Knex, t: Tables): Promise<void> {
  await knex.raw(`DROP TABLE IF EXISTS ${t.jobEdges}`);
}
