import type { Knex } from 'knex';
import type { Tables } from '../src/db/tables.ts';

/**
 * What makes a doorbell verifiable (src/wakeups/parkedSleep.ts): `token`, 128 random bits (hex)
 * drawn at each registration, which the doorbell's sleeping statement carries in its text, and
 * `db_user`, the database user the doorbell connected as (the process list's USER). A ring ends a
 * connection's statement only when the process list shows that connection running that very
 * sleep, token and all, as the ringer's own user: a connection id read from the table alone (stale
 * after a restart, or written by anyone who may INSERT) is never enough. Rows of an earlier
 * sluice's workers keep '' in both: nothing rings them, their workers poll. Re-runnable: MySQL 8
 * has no ADD COLUMN IF NOT EXISTS, so the columns are looked up first; a small table.
 */
const COLUMNS = {
  token: "CHAR(32) CHARACTER SET ascii COLLATE ascii_bin NOT NULL DEFAULT '' AFTER connection_id",
  db_user: "VARCHAR(128) NOT NULL DEFAULT '' AFTER token",
} as const;

async function existing(knex: Knex, t: Tables): Promise<Set<string>> {
  const [rows] = (await knex.raw(
    `SELECT column_name AS name FROM information_schema.columns
     WHERE table_schema = DATABASE() AND table_name = ? AND column_name IN (?)`,
    [`${t.prefix}doorbells`, Object.keys(COLUMNS)],
  )) as [{ name: string }[]];
  return new Set(rows.map((r) => r.name.toLowerCase()));
}

export async function up(knex: Knex, t: Tables): Promise<void> {
  const have = await existing(knex, t);
  const add = Object.entries(COLUMNS).filter(([name]) => !have.has(name));
  if (add.length === 0) return;
  await knex.raw(`ALTER TABLE ${t.doorbells} ${add.map(([name, type]) => `ADD COLUMN ${name} ${type}`).join(', ')}`);
}

export async function down(knex: Knex, t: Tables): Promise<void> {
  const have = await existing(knex, t);
  const drop = Object.keys(COLUMNS).filter((name) => have.has(name));
  if (drop.length === 0) return;
  await knex.raw(`ALTER TABLE ${t.doorbells} ${drop.map((name) => `DROP COLUMN ${name}`).join(', ')}`);
}
