import type { Knex } from 'knex';
import { strictly } from '../src/db/strictly.ts';
import type { Tables } from '../src/db/tables.ts';
import { SchemaVersionError } from '../src/errors.ts';

/** The lock_id a worker writes now: `<13-character key>.<sequence>` (src/worker/ClaimTokens.ts). */
const LOCK_ID_WIDTH = 24;
const PREVIOUS_WIDTH = 64;

/**
 * Narrows lock_id from CHAR(64) to CHAR(24). lock_id is in ix_head, and a CHAR is stored at its
 * full width: every claim moved a 64-byte key within the index and every completion deleted one,
 * though a lock_id needs about 20 bytes. A worker's lock_id is now its 64-bit claim key and the
 * claim's sequence; host and pid, which the old lock_id carried for operators, are in the worker
 * registry, whose ids end with the same key. Measured with bench/drainAB.ts (c500, 100,000 jobs,
 * history on): an experiment with CHAR(28) alone, 28.3k → 30.1k jobs/s; this migration and the
 * drop of ix_idempotency (202611250100) together, 30,691 → 33,335 (6 pairs, every one faster).
 *
 * Rolling upgrade: workers of an earlier sluice write longer lock_ids, which no longer fit. Stop
 * them before migrating (their claims are released as they stop). The migration refuses to run,
 * changing nothing, while any job is claimed with a lock_id that does not fit. The ALTER rebuilds
 * the table (a copy: writes wait for it), under strict mode, so that it fails whole rather than
 * cut a lock_id.
 */
export async function up(knex: Knex, t: Tables): Promise<void> {
  const [rows] = (await knex.raw(`SELECT COUNT(*) AS n FROM ${t.jobs} WHERE CHAR_LENGTH(lock_id) > ?`, [
    LOCK_ID_WIDTH,
  ])) as [{ n: number | string }[]];
  const tooLong = Number(rows[0]?.n ?? 0);
  if (tooLong > 0) {
    throw new SchemaVersionError(
      `${tooLong} job(s) in ${t.jobs} are claimed with a lock_id longer than ${LOCK_ID_WIDTH} characters (workers of an earlier sluice): stop those workers, which releases their claims, then migrate again. Nothing was changed.`,
    );
  }
  await strictly(
    knex,
    `ALTER TABLE ${t.jobs} MODIFY lock_id CHAR(${LOCK_ID_WIDTH}) CHARACTER SET ascii COLLATE ascii_bin NOT NULL DEFAULT ''`,
  );
}

export async function down(knex: Knex, t: Tables): Promise<void> {
  await knex.raw(
    `ALTER TABLE ${t.jobs} MODIFY lock_id CHAR(${PREVIOUS_WIDTH}) CHARACTER SET ascii COLLATE ascii_bin NOT NULL DEFAULT ''`,
  );
}
