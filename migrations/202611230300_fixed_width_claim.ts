import type { Knex } from 'knex';
import { strictly } from '../src/db/strictly.ts';
import type { Tables } from '../src/db/tables.ts';
import { SchemaVersionError } from '../src/errors.ts';

/** Widest lock_id a worker of that version wrote (it cut the host name to fit; 202611250101 narrows it again). */
const LOCK_ID_WIDTH = 64;
/** locked_at of a free job: no claim. A valid DATETIME on MySQL 8 and MariaDB in any sql_mode. */
const NO_CLAIM = '1970-01-01 00:00:01.000';

/**
 * Makes the claim an in-place update. The claim UPDATE writes lock_id ('' → a token) and
 * locked_at (NULL → a time); with a VARCHAR and a NULL the row grows, and InnoDB rewrites it
 * instead of updating it in place. As CHAR(64) ascii (always 64 bytes) and a DATETIME that is
 * never NULL (free jobs get the no-claim time; releases write DEFAULT), both keep their size, so
 * claims and extensions update the row where it lies (the claim UPDATE alone: about 38 → 30 µs
 * of server CPU per job here). The price: about 64 more bytes per live row and per ix_head entry.
 *
 * Rolling upgrade: locked_at stays nullable, because workers of the previous version still write
 * NULL when they release (those rows simply grow again at their next claim). Rows already free
 * keep their NULL until they are claimed: no statement here walks the table. The ALTER rebuilds
 * the table (a copy: writes wait for it), under strict mode so that it fails whole rather than
 * cut a lock_id. It refuses to run, changing nothing, while a job is claimed with a lock_id that
 * would not fit (a worker of an earlier sluice on a host with a long or non-ASCII name): stop
 * those workers, which releases their claims, and migrate again.
 */
export async function up(knex: Knex, t: Tables): Promise<void> {
  const [rows] = (await knex.raw(
    `SELECT COUNT(*) AS n FROM ${t.jobs} WHERE CHAR_LENGTH(lock_id) > ? OR lock_id <> CONVERT(lock_id USING ascii)`,
    [LOCK_ID_WIDTH],
  )) as [{ n: number | string }[]];
  const tooLong = Number(rows[0]?.n ?? 0);
  if (tooLong > 0) {
    throw new SchemaVersionError(
      `${tooLong} job(s) in ${t.jobs} are claimed with a lock_id longer than ${LOCK_ID_WIDTH} ASCII characters (workers of an earlier sluice on a host with a long name): stop those workers, which releases their claims, then migrate again. Nothing was changed.`,
    );
  }
  await strictly(
    knex,
    `
ALTER TABLE ${t.jobs}
  MODIFY lock_id   CHAR(${LOCK_ID_WIDTH}) CHARACTER SET ascii COLLATE ascii_bin NOT NULL DEFAULT '',
  MODIFY locked_at DATETIME(3) NULL DEFAULT '${NO_CLAIM}'`,
  );
}

export async function down(knex: Knex, t: Tables): Promise<void> {
  await knex.raw(`
ALTER TABLE ${t.jobs}
  MODIFY lock_id   VARCHAR(128) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL DEFAULT '',
  MODIFY locked_at DATETIME(3) NULL DEFAULT NULL`);
}
