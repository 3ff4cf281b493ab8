import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';
import { integerIn } from '../options.ts';
import { type BatchStatus, getBatch } from './getBatch.ts';

/** Params: ?1 upper bound (exclusive), ?2 limit. The newest batch ids below a bound: a primary-key range, newest first. */
const sqlBatchIds = (t: Tables) => `
SELECT id
FROM ${t.batches}
WHERE id < ?
ORDER BY id DESC
LIMIT ?`;

/**
 * One page of batches, newest first (keyset: pass `next` as `before`), each with its counts
 * (getBatch: counted through the batch_id indexes, so a page costs its batches' sizes, not the table's).
 */
export async function listBatches(
  db: Executor,
  tables: Tables,
  page: { before?: number; limit?: number } = {},
): Promise<{ batches: BatchStatus[]; next: number | null }> {
  const limit = integerIn('limit', page.limit ?? 20, 1, 200);
  const before = page.before === undefined ? Number.MAX_SAFE_INTEGER : integerIn('before', page.before, 1);
  const rows = await db.select<{ id: number | string }>(sqlBatchIds(tables), [before, limit + 1]);
  const ids = rows.slice(0, limit).map((r) => Number(r.id));
  const batches: BatchStatus[] = [];
  for (const id of ids) {
    const batch = await getBatch(db, tables, id);
    if (batch) batches.push(batch);
  }
  return { batches, next: rows.length > limit ? (ids[ids.length - 1] ?? null) : null };
}
