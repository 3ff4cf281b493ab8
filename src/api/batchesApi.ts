import { type BatchStatus, getBatch } from '../batches/getBatch.ts';
import { listBatches } from '../batches/listBatches.ts';
import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';
import { type GraphJob, type GraphPage, listGraph } from '../jobControl/listGraph.ts';
import type { JobPage } from '../jobControl/listJobs.ts';
import type { Guard } from './Guard.ts';

export type { GraphJob, GraphPage };

/** `sluice.batches`: submitted batches with their counts (counted through the batch_id indexes). */
export function batchesApi(db: Executor, tables: Tables, guard: Guard) {
  return {
    /** A batch's size, pending / succeeded / dead / cancelled counts and finishedAt; null if no such batch. */
    get: (batchId: number): Promise<BatchStatus | null> => guard(() => getBatch(db, tables, batchId)),
    /** One page of batches, newest first (keyset: pass `next` as `before`). */
    list: (page?: { before?: number; limit?: number }): Promise<{ batches: BatchStatus[]; next: number | null }> =>
      guard(() => listBatches(db, tables, page)),
    /**
     * One page of a batch's graph as it stands: its live jobs (as `jobs.list({ batchId })` pages
     * them) each with its parents (how each ended, or 'pending') and live children. A finished job
     * leaves the graph; its live children still name it.
     */
    graph: (batchId: number, page?: JobPage): Promise<GraphPage> => guard(() => listGraph(db, tables, batchId, page)),
  };
}

export type BatchesApi = ReturnType<typeof batchesApi>;
