import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';
import { OptionsError } from '../errors.ts';

/** Params: ?1 key, ?2 limit. Live jobs holding a key: ix_idempotency (idempotency_key, queue). */
const sqlLiveByKey = (t: Tables) => `
SELECT id
FROM ${t.jobs}
WHERE idempotency_key = ?
ORDER BY id
LIMIT ?`;

/** Params: ?1 queue, ?2 key. The job a kept key row names (primary key): live, or finished within the key's retention. */
const sqlKeyRow = (t: Tables) => `
SELECT job_id
FROM ${t.idempotencyKeys}
WHERE queue = ?
  AND idempotency_key = ?`;

/** Most live jobs one look-up returns (a key names one job per queue). */
const LIMIT = 100;

/**
 * The ids of the jobs an idempotency key names, by index only: the live jobs holding it (any
 * queue), and with `queue`, the job its key row names — a finished one too, while the key is kept
 * (idempotencyRetentionMs). Without a queue a finished job is not found: the key table is keyed
 * by queue first, and nothing is scanned.
 */
export async function findJobsByKey(db: Executor, tables: Tables, key: string, queue?: string): Promise<number[]> {
  if (typeof key !== 'string' || key === '') throw new OptionsError('key', 'must be a non-empty string');
  const ids = new Set(
    (await db.select<{ id: number | string }>(sqlLiveByKey(tables), [key, LIMIT])).map((r) => Number(r.id)),
  );
  if (queue !== undefined)
    for (const row of await db.select<{ job_id: number | string | null }>(sqlKeyRow(tables), [queue, key]))
      if (row.job_id !== null) ids.add(Number(row.job_id));
  return [...ids].sort((a, b) => a - b);
}
