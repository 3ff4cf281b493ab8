import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';

/**
 * Where a segment of a walk (jobPlans.ts) begins when a filter names it only indirectly: a single
 * primary-key lookup. (The queues and priorities a walk passes are read in batches: queueHeads.ts.)
 */

/** Params: ?1 batch id. When the batch was created (its jobs cannot have finished before). */
const sqlBatchCreated = (t: Tables) => `
SELECT created_at
FROM ${t.batches}
WHERE id = ?`;

export async function batchCreatedAt(db: Executor, t: Tables, batchId: number): Promise<Date | null> {
  const [row] = await db.select<{ created_at: Date }>(sqlBatchCreated(t), [batchId]);
  return row?.created_at ?? null;
}
