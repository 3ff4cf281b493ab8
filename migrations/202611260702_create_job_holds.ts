import type { Knex } from 'knex';
import type { Tables } from '../src/db/tables.ts';

/**
 * Why a held-back job is not claimable. A held job is a live row of jobs parked at run_at =
 * '9999-12-31 23:59:59.000' (HELD_RUN_AT): past the claim's range of ix_head
 * (`lock_id = '' AND run_at <= NOW(3)`), so no claim ever reads it, and its id, payload, batch,
 * idempotency key and trace stay where they are. This row says why and what to restore:
 * - reason: 'parents' (waiting for its parents to finish); later 'limit' (a concurrency key).
 * - run_at: the job's intended run_at, restored as GREATEST(run_at, NOW(3)) on release.
 * - waiting_parents: parents not finished yet. Each finishing parent decrements it under this row's
 *   lock, so of two parents finishing at once exactly one sees 0 and releases the child.
 * Deleted with the release, in the same transaction.
 */
export async function up(knex: Knex, t: Tables): Promise<void> {
  await knex.raw(`
CREATE TABLE IF NOT EXISTS ${t.jobHolds} (
  job_id          BIGINT UNSIGNED NOT NULL,
  reason          VARCHAR(16)     NOT NULL,
  run_at          DATETIME(3)     NOT NULL,
  waiting_parents INT UNSIGNED    NOT NULL DEFAULT 0,
  PRIMARY KEY (job_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`);
}

export async function down(knex: Knex, t: Tables): Promise<void> {
  await knex.raw(`DROP TABLE IF EXISTS ${t.jobHolds}`);
}
