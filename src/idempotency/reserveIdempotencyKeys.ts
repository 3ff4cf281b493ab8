import { randomBytes } from 'node:crypto';
import { escape as sqlLiteral } from 'mysql2';
import { binaryOrder } from '../db/binaryOrder.ts';
import type { Executor } from '../db/executor.ts';
import { type ChunkLimits, planChunks } from '../db/planChunks.ts';
import type { Tables } from '../db/tables.ts';

/**
 * Multi-row prefix; tuples are (queue, key, owner, NOW(3)). A key whose row exists and has not
 * expired keeps its owner (the statement waits for a concurrent enqueue of the same key to
 * commit, then sees it): the primary key is the arbiter, not a check-then-insert. An expired row
 * is taken over. ODKU assignments read the old expires_at, left to right.
 */
const sqlReservePrefix = (t: Tables) => `
INSERT INTO ${t.idempotencyKeys} (queue, idempotency_key, owner, created_at)
VALUES `;
const SQL_RESERVE_SUFFIX = `
ON DUPLICATE KEY UPDATE
  owner = IF(expires_at < NOW(3), VALUES(owner), owner),
  job_id = IF(expires_at < NOW(3), NULL, job_id),
  expires_at = IF(expires_at < NOW(3), NULL, expires_at)`;

/** Params: ?1 owner. The keys this enqueue call won. */
const sqlOwned = (t: Tables) => `
SELECT queue, idempotency_key
FROM ${t.idempotencyKeys}
WHERE owner = ?`;

/**
 * Params: ?1 the first job id this transaction inserted (since it won its keys). The keyed jobs
 * from that id on: its own, and any that another enqueue committed meanwhile (the caller keeps only
 * the keys it won, which no other live job can hold). A plain read by primary key: no index on
 * the key (every job would pay for it, keyed or not), and no lock on anyone else's rows (a
 * locking read here would wait for a concurrent batch's uncommitted jobs).
 */
const sqlInsertedKeyed = (t: Tables) => `
SELECT id, queue, idempotency_key
FROM ${t.jobs}
WHERE id >= ?
  AND idempotency_key IS NOT NULL`;

/**
 * Multi-row prefix; tuples are (queue, key, owner, NOW(3), job id). Points each key this call won
 * at the job inserted for it, through the keys table's primary key: every row exists and is held
 * by this transaction, so each tuple updates its row (written as an upsert, like the reservation,
 * so that the values are converted to the columns' character set rather than compared in the
 * session's). A row some other owner holds is left as it is.
 */
const sqlLinkPrefix = (t: Tables) => `
INSERT INTO ${t.idempotencyKeys} (queue, idempotency_key, owner, created_at, job_id)
VALUES `;
const SQL_LINK_SUFFIX = `
ON DUPLICATE KEY UPDATE
  job_id = IF(owner = VALUES(owner), VALUES(job_id), job_id)`;

/** Params: ?1 queue, ?2 key. The job that holds a key (live, or finished within the retention). */
const sqlHolder = (t: Tables) => `
SELECT job_id
FROM ${t.idempotencyKeys}
WHERE queue = ?
  AND idempotency_key = ?`;

export interface KeyedJob {
  readonly queue: string;
  readonly idempotencyKey: string;
}

/**
 * Pure: the keyed jobs of `jobs` in the one global order keys are locked in (queue, then key,
 * binary): concurrent batches then lock keys in the same order and never deadlock on them.
 */
export function keyedInLockOrder<J extends { readonly queue: string; readonly idempotencyKey: string | null }>(
  jobs: readonly J[],
): (J & KeyedJob)[] {
  return jobs
    .filter((j): j is J & KeyedJob => j.idempotencyKey !== null)
    .sort((a, b) =>
      a.queue === b.queue ? binaryOrder(a.idempotencyKey, b.idempotencyKey) : binaryOrder(a.queue, b.queue),
    );
}

/** `queue \0 key`: how keys are compared in memory. */
export function keyOf(job: KeyedJob): string {
  return `${job.queue}\u0000${job.idempotencyKey}`;
}

/**
 * Inside the enqueue transaction: reserves the keys of `keyed` and returns the owner token and the
 * keys this call won; the other keys belong to live jobs, or to jobs finished within the
 * retention, and their jobs are duplicates to skip.
 */
export async function reserveIdempotencyKeys(
  tx: Executor,
  tables: Tables,
  keyed: readonly KeyedJob[],
  limits: ChunkLimits,
): Promise<{ owner: string; won: Set<string> }> {
  const owner = randomBytes(12).toString('hex');
  const tuples = keyed.map((k) => `(${sqlLiteral(k.queue)},${sqlLiteral(k.idempotencyKey)},'${owner}',NOW(3))`);
  for (const statement of planChunks(sqlReservePrefix(tables), tuples, limits)) {
    await tx.write(statement + SQL_RESERVE_SUFFIX);
  }
  const rows = await tx.select<{ queue: string; idempotency_key: string }>(sqlOwned(tables), [owner]);
  return { owner, won: new Set(rows.map((r) => keyOf({ queue: r.queue, idempotencyKey: r.idempotency_key }))) };
}

/** After the jobs are inserted, in the same transaction: records which job holds each won key. */
/**
 * Params: ?1 owner. Drops this call's reservations that no inserted job took: a reservation must
 * never outlive the enqueue as a key with no job, which would refuse every later job of that key.
 */
const sqlDropUnlinked = (t: Tables) => `
DELETE FROM ${t.idempotencyKeys}
WHERE owner = ?
  AND job_id IS NULL
  AND expires_at IS NULL`;

/**
 * After the jobs are inserted, in the same transaction: records which job holds each key this
 * call won (`won`, from reserveIdempotencyKeys), finding the jobs from `firstJobId` (the
 * smallest insertId of the INSERTs since the reservation) on; then drops any reservation left
 * unused.
 */
export async function linkIdempotencyKeys(
  tx: Executor,
  tables: Tables,
  reservation: { readonly owner: string; readonly won: ReadonlySet<string> },
  firstJobId: number,
  limits: ChunkLimits,
): Promise<void> {
  const rows =
    reservation.won.size > 0 && Number.isFinite(firstJobId)
      ? await tx.select<{ id: number | string; queue: string; idempotency_key: string }>(sqlInsertedKeyed(tables), [
          firstJobId,
        ])
      : [];
  const tuples = rows
    .filter((r) => reservation.won.has(keyOf({ queue: r.queue, idempotencyKey: r.idempotency_key })))
    .map(
      (r) => `(${sqlLiteral(r.queue)},${sqlLiteral(r.idempotency_key)},'${reservation.owner}',NOW(3),${Number(r.id)})`,
    );
  for (const statement of planChunks(sqlLinkPrefix(tables), tuples, limits)) {
    await tx.write(statement + SQL_LINK_SUFFIX);
  }
  await tx.write(sqlDropUnlinked(tables), [reservation.owner]);
}

/** The id of the job holding a key, for reporting a duplicate. */
export async function keyHolder(tx: Executor, tables: Tables, job: KeyedJob): Promise<number | null> {
  const [row] = await tx.select<{ job_id: number | null }>(sqlHolder(tables), [job.queue, job.idempotencyKey]);
  return row?.job_id == null ? null : Number(row.job_id);
}
