import { randomBytes } from 'node:crypto';
import { escape as sqlLiteral } from 'mysql2';
import { binaryOrder } from '../db/binaryOrder.ts';
import type { Executor } from '../db/executor.ts';
import { type ChunkLimits, planChunks } from '../db/planChunks.ts';
import type { Tables } from '../db/tables.ts';
import { THROTTLE_KEY_PREFIX } from '../model/flowControlOf.ts';

/**
 * Multi-row prefix; tuples are (queue, 'sluice:throttle:' + key, owner, NOW(3), NOW(3) + window).
 * A throttle window is an idempotency key that expires when the window ends, whatever becomes of
 * its job: while the row has not expired it keeps its owner (the statement waits for a concurrent
 * enqueue of the same key to commit, then sees it), and an expired one is taken over with a new
 * window. The prefix is one validation refuses on an application's idempotency key, so the two
 * never collide. ODKU assignments read the old expires_at, left to right. Pruned with the other
 * expired keys (pruneIdempotencyKeys).
 */
const sqlReservePrefix = (t: Tables) => `
INSERT INTO ${t.idempotencyKeys} (queue, idempotency_key, owner, created_at, expires_at)
VALUES `;
const SQL_RESERVE_SUFFIX = `
ON DUPLICATE KEY UPDATE
  owner = IF(expires_at < NOW(3), VALUES(owner), owner),
  job_id = IF(expires_at < NOW(3), NULL, job_id),
  expires_at = IF(expires_at < NOW(3), VALUES(expires_at), expires_at)`;

/** Params: ?1 owner. The throttle windows this enqueue call took (ix_owner). */
const sqlOwned = (t: Tables) => `
SELECT queue, idempotency_key
FROM ${t.idempotencyKeys}
WHERE owner = ?`;

/**
 * Params: ?1 job id, ?2 queue, ?3 key, ?4 owner. Points a window this call took at its job, so that
 * a throttled enqueue can name the job that holds the window. Returns affectedRows 1.
 */
const sqlLink = (t: Tables) => `
UPDATE ${t.idempotencyKeys}
SET job_id = ?
WHERE queue = ?
  AND idempotency_key = ?
  AND owner = ?`;

/** Params: ?1 queue, ?2 key. The job that holds a throttle window, if it was recorded. */
const sqlHolder = (t: Tables) => `
SELECT job_id
FROM ${t.idempotencyKeys}
WHERE queue = ?
  AND idempotency_key = ?`;

export interface ThrottledJob {
  readonly queue: string;
  readonly key: string;
  readonly windowMs: number;
}

/**
 * Inside the enqueue's transaction: takes the throttle window of each (queue, key) whose window is
 * free, and returns which jobs (by index in `jobs`) got one; the others are throttled. Of several
 * jobs of one key in the call, the first takes the window. Keys are sent in one global order, so
 * concurrent enqueues never deadlock on them. Two statements per packet's worth of keys.
 */
export async function reserveThrottleKeys(
  tx: Executor,
  tables: Tables,
  jobs: readonly ThrottledJob[],
  limits: ChunkLimits,
): Promise<{ owner: string; took: Set<number> }> {
  const owner = randomBytes(12).toString('hex');
  const first = new Map<string, number>();
  jobs.forEach((job, i) => {
    if (!first.has(keyOf(job))) first.set(keyOf(job), i);
  });
  const keys = [...first.keys()].sort(binaryOrder);
  const tuples = keys.map((k) => {
    const job = jobs[first.get(k) as number] as ThrottledJob;
    const micros = job.windowMs * 1000;
    return `(${sqlLiteral(job.queue)},${sqlLiteral(THROTTLE_KEY_PREFIX + job.key)},'${owner}',NOW(3),NOW(3) + INTERVAL ${micros} MICROSECOND)`;
  });
  for (const statement of planChunks(sqlReservePrefix(tables), tuples, limits))
    await tx.write(statement + SQL_RESERVE_SUFFIX);
  const rows = await tx.select<{ queue: string; idempotency_key: string }>(sqlOwned(tables), [owner]);
  const took = new Set<number>();
  for (const r of rows) {
    const index = first.get(`${r.queue}\u0000${r.idempotency_key.slice(THROTTLE_KEY_PREFIX.length)}`);
    if (index !== undefined) took.add(index);
  }
  return { owner, took };
}

/** Records the job that took a window (one enqueue), for reporting it to throttled enqueues. */
export async function linkThrottleKey(
  tx: Executor,
  tables: Tables,
  job: ThrottledJob,
  owner: string,
  jobId: number,
): Promise<void> {
  await tx.write(sqlLink(tables), [jobId, job.queue, THROTTLE_KEY_PREFIX + job.key, owner]);
}

/** The id of the job that holds a throttle window, or 0 when none was recorded (a batch took it). */
export async function throttleHolder(tx: Executor, tables: Tables, job: ThrottledJob): Promise<number> {
  const [row] = await tx.select<{ job_id: number | null }>(sqlHolder(tables), [
    job.queue,
    THROTTLE_KEY_PREFIX + job.key,
  ]);
  return row?.job_id == null ? 0 : Number(row.job_id);
}

function keyOf(job: { readonly queue: string; readonly key: string }): string {
  return `${job.queue}\u0000${job.key}`;
}
