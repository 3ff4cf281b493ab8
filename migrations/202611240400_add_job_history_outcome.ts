import type { Knex } from 'knex';
import type { Tables } from '../src/db/tables.ts';

/**
 * job_history keeps a finished job whole, so that `sluice.jobs.get(id)` answers for it as for a
 * live one: how it ended (`outcome`: completed, or cancelled before or while it ran), what its
 * handler returned (`result`, JSON text, NULL when it returned nothing or the result was dropped),
 * and the columns a live job shows (priority, max_retries, idempotency_key, last_error, and
 * started_at: when its last attempt was claimed). Columns are added at the end, so the ALTER is
 * instant on MariaDB 10.3+ and MySQL 8.0.12+; existing rows read as completed. Re-runnable: MySQL 8
 * has no ADD COLUMN IF NOT EXISTS, so each column is looked up first.
 */
const COLUMNS: readonly (readonly [string, string])[] = [
  ['outcome', "ENUM('completed','cancelled') NOT NULL DEFAULT 'completed'"],
  ['priority', 'SMALLINT NOT NULL DEFAULT 0'],
  ['max_retries', 'INT UNSIGNED NULL'],
  ['idempotency_key', 'VARCHAR(191) NULL'],
  ['last_error', 'TEXT NULL'],
  ['result', 'MEDIUMTEXT NULL'],
  ['started_at', 'DATETIME(3) NULL'],
];

export async function up(knex: Knex, t: Tables): Promise<void> {
  const [rows] = (await knex.raw(
    `SELECT column_name AS name FROM information_schema.columns
     WHERE table_schema = DATABASE() AND table_name = ?`,
    [`${t.prefix}job_history`],
  )) as [{ name: string }[]];
  const present = new Set(rows.map((r) => r.name));
  const missing = COLUMNS.filter(([name]) => !present.has(name));
  if (missing.length === 0) return;
  await knex.raw(
    `ALTER TABLE ${t.jobHistory} ${missing.map(([name, type]) => `ADD COLUMN ${name} ${type}`).join(', ')}`,
  );
}

export async function down(knex: Knex, t: Tables): Promise<void> {
  await knex.raw(`ALTER TABLE ${t.jobHistory} ${COLUMNS.map(([name]) => `DROP COLUMN ${name}`).join(', ')}`);
}
