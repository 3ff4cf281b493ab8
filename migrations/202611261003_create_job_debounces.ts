import type { Knex } from 'knex';
import type { Tables } from '../src/db/tables.ts';

/**
 * Debounce (src/enqueue/debounceJob.ts): one row per (queue, debounce key) ever used, naming the
 * job that waits for it. A debounced enqueue locks the row (creating it), and while that job has not
 * started, replaces its payload and pushes its run_at; once it started (or finished), the next
 * enqueue writes a new job and points the row at it. first_at: when the waiting job was first
 * enqueued (its maxWaitMs counts from there); ix_job: which key a job waits for (jobs.get, pruning).
 * Only debounced jobs touch this table. Rows whose job
 * is gone are pruned by the maintenance task pruneDebounces.
 * Re-runnable: CREATE TABLE IF NOT EXISTS.
 */
export async function up(knex: Knex, t: Tables): Promise<void> {
  await knex.raw(`
CREATE TABLE IF NOT EXISTS ${t.jobDebounces} (
  queue        VARCHAR(64)     NOT NULL,
  debounce_key VARCHAR(191)    NOT NULL,
  job_id       BIGINT UNSIGNED NOT NULL DEFAULT 0,
  first_at     DATETIME(3)     NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  PRIMARY KEY (queue, debounce_key),
  KEY ix_job (job_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`);
}

export async function down(knex: Knex, t: Tables): Promise<void> {
  await knex.raw(`DROP TABLE IF EXISTS ${t.jobDebounces}`);
}
