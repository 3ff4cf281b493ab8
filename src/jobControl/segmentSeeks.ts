import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';

/**
 * Where the segments of a walk (jobPlans.ts) begin: each a single seek — MIN() over an index
 * prefix, which the server answers from the index alone ("Select tables optimized away") whatever
 * the backlog — or a primary-key lookup. MySQL and MariaDB have no loose index scan for these
 * shapes, so the distinct values are found one seek at a time, lazily, as a walk reaches them (priorities:
 * queues/nextFreePriority.ts; queue names: queues/nextQueue.ts).
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
