import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';

/**
 * A batch row's columns with its live and dead job counts, counted through the batch_id indexes
 * (a seek on the batch's id each: a subquery per batch row is a ref, never a range) — there is no
 * per-batch counter row for every worker to update — and its cancelled count, which only a cancel
 * writes (in the transaction that removes the jobs).
 */
export const batchColumns = (t: Tables) => `
SELECT b.id, b.name, b.size, b.created_at, b.finished_at, b.cancelled,
       (SELECT COUNT(*) FROM ${t.jobs} j WHERE j.batch_id = b.id) AS pending,
       (SELECT COUNT(*) FROM ${t.deadJobs} d WHERE d.batch_id = b.id AND d.redriven_at IS NULL) AS dead
FROM ${t.batches} b`;

/** Params: ?1 batch id. The batch by primary key, with its counts. */
const sqlBatch = (t: Tables) => `${batchColumns(t)}
WHERE b.id = ?`;

/** A row of batchColumns. */
export interface BatchRow {
  id: number;
  name: string | null;
  size: number;
  created_at: Date;
  finished_at: Date | null;
  cancelled: number | string;
  pending: number | string;
  dead: number | string;
}

export interface BatchStatus {
  readonly id: number;
  /** What its enqueuer named it (`enqueueBatch(jobs, { name })`; `schedules` for a schedule fire), or null. */
  readonly name: string | null;
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
  const [row] = await db.select<BatchRow>(sqlBatch(tables), [batchId]);
  return row ? batchStatus(row) : null;
}

/** Pure: a row of batchColumns as the API gives it. */
export function batchStatus(row: BatchRow): BatchStatus {
  const pending = Number(row.pending);
  const dead = Number(row.dead);
  const cancelled = Number(row.cancelled);
  return {
    id: Number(row.id),
    name: row.name,
    size: row.size,
    pending,
    dead,
    cancelled,
    succeeded: Math.max(0, row.size - pending - dead - cancelled),
    createdAt: row.created_at,
    finishedAt: row.finished_at,
  };
}
