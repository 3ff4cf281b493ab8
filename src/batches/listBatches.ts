import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';
import { integerIn } from '../options.ts';
import { type BatchRow, type BatchStatus, batchColumns, batchStatus } from './getBatch.ts';

/**
 * Params: ?1 upper bound (exclusive), ?2 limit. The newest batches below a bound, with their
 * counts: a primary-key range, newest first, in one statement whatever the page's size.
 */
const sqlBatches = (t: Tables) => `${batchColumns(t)}
WHERE b.id < ?
ORDER BY b.id DESC
LIMIT ?`;

/**
 * One page of batches, newest first (keyset: pass `next` as `before`), each with its counts
 * (batchColumns: counted through the batch_id indexes, so a page costs its batches' sizes, not the
 * table's), in one statement.
 */
export async function listBatches(
  db: Executor,
  tables: Tables,
  page: { before?: number; limit?: number } = {},
): Promise<{ batches: BatchStatus[]; next: number | null }> {
  const limit = integerIn('limit', page.limit ?? 20, 1, 200);
  const before = page.before === undefined ? Number.MAX_SAFE_INTEGER : integerIn('before', page.before, 1);
  const rows = await db.select<BatchRow>(sqlBatches(tables), [before, limit + 1]);
  const batches = rows.slice(0, limit).map(batchStatus);
  return { batches, next: rows.length > limit ? (batches[batches.length - 1]?.id ?? null) : null };
}
