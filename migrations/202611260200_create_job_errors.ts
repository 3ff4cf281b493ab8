import type { Knex } from 'knex';
import type { Tables } from '../src/db/tables.ts';

/**
 * The errors of a job's latest failed attempts (`keptAttempts`, 10 by default), one row per
 * attempt: its number, when it failed (DB clock), the worker that ran it, and the error's message,
 * code and stack, each cut to a bounded size. A narrow table of its own, written only when an
 * attempt fails — in the transaction of the fenced retry or dead-letter write, or of the
 * maintenance release that took a dead worker's claim back — and trimmed to the latest attempts in
 * that same transaction: a job that never fails costs nothing, and the live jobs table keeps its
 * fixed-width rows. Rows stay while the job is live and with its history or dead row, and are
 * pruned once the job is in none of them (ix_failed).
 */
export async function up(knex: Knex, t: Tables): Promise<void> {
  await knex.raw(`
CREATE TABLE IF NOT EXISTS ${t.jobErrors} (
  job_id     BIGINT UNSIGNED NOT NULL,
  attempt    INT UNSIGNED    NOT NULL,
  failed_at  DATETIME(3)     NOT NULL,
  worker_id  VARCHAR(128)    NULL,
  code       VARCHAR(64)     NULL,
  message    TEXT            NOT NULL,
  stack      TEXT            NULL,
  PRIMARY KEY (job_id, attempt),
  KEY ix_failed (failed_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`);
}

export async function down(knex: Knex, t: Tables): Promise<void> {
  await knex.raw(`DROP TABLE IF EXISTS ${t.jobErrors}`);
}
