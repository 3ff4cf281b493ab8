import type { Knex } from 'knex';
import type { Tables } from '../src/db/tables.ts';

/**
 * Payloads stored apart from their job, written once at enqueue and keyed by the job's id: the
 * claim reads one by primary key with its rows (a join in the claim's load), completions and
 * dead-lettering never copy it (their history and dead rows keep the job's id, which is the
 * reference), and pruning history or dead jobs deletes it with the row that referred to it.
 * A job's `payload` column holds '' (never valid JSON) when its payload is here.
 *
 * Only payloads over 1 KiB as JSON that do not pack into 1 KiB come here (src/model/storedPayload.ts);
 * the others stay in the job's row, so the ~100-byte bulk and single enqueue stay one table and one statement (apart,
 * a single enqueue is a transaction of two INSERTs). Over it, the hot row stays narrow for the
 * claim's in-place UPDATE and the completion copies '' instead of the payload: at 1 KB a drained
 * job wrote 3.2 KB of redo inline against 0.76 KB apart; at 0–16 KiB, 11 KB against 0.8 KB
 * (docs/how-it-works.md, Payloads, has the table and the command).
 *
 * Online: a new table, nothing else changes. Rows written before it keep their payload inline and
 * are read as they are: every reader takes this table's row when there is one, else the column.
 */
export async function up(knex: Knex, t: Tables): Promise<void> {
  await knex.raw(`
CREATE TABLE IF NOT EXISTS ${t.jobPayloads} (
  job_id   BIGINT UNSIGNED NOT NULL,
  payload  MEDIUMTEXT      NOT NULL,
  PRIMARY KEY (job_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`);
}

export async function down(knex: Knex, t: Tables): Promise<void> {
  await knex.raw(`DROP TABLE IF EXISTS ${t.jobPayloads}`);
}
