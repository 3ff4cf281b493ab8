import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';

/**
 * Params: ?1 batch id (×3). Returns the batch row with its live and dead job counts, counted
 * through the batch_id indexes — there is no per-batch counter row for every worker to update —
 * and its cancelled count, which only a cancel writes (in the transaction that removes the jobs).
 */
const sqlBatch = (t: Tables) => `
SELECT b.id, b.size, b.created_at, b.finished_at, b.cancelled,
       (SELECT COUNT(*) FROM ${t.jobs} j WHERE j.batch_id = ?) AS pending,
       (SELECT COUNT(*) FROM ${t.deadJobs} d WHERE d.batch_id = ? AND d.redriven_at IS NULL) AS dead
FROM ${t.batches} b
WHERE b.id = ?`;

export interface BatchStatus {
  readonly id: number;
  readonly size: number;
  /** Jobs still waiting, running or awaiting a retry. */
  readonly pending: number;
  /** Jobs that finished in dead_jobs (and were not re-driven). */
  readonly dead: number;
  /** Jobs cancelled before they finished (sluice.jobs.cancel). */
  readonly cancelled: number;
  /** Jobs that finished successfully: size − pending − dead − cancelled. */
  readonly succeeded: number;
  readonly createdAt: Date;
  /** Set once by the maintenance process when no job of the batch is pending. */
  readonly finishedAt: Date | null;
}

export async function getBatch(db: Executor, tables: Tables, batchId: number): Promise<BatchStatus | null> {
  const [row] = await db.select<{
    id: number;
    size: number;
    created_at: Date;
    finished_at: Date | null;
    cancelled: number | string;
    pending: number | string;
    dead: number | string;
  }>(sqlBatch(tables), [batchId, batchId, batchId]);
  if (!row) return null;
  const pending = Number(row.pending);
  const dead = Number(row.dead);
  const cancelled = Number(row.cancelled);
  return {
    id: Number(row.id),
    size: row.size,
    pending,
    dead,
    cancelled,
    succeeded: Math.max(0, row.size - pending - dead - cancelled),
    createdAt: row.created_at,
    finishedAt: row.finished_at,
  };
}
